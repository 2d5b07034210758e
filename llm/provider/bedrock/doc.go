// Package bedrock is the [llm.Model] of AWS Bedrock's Converse API, through
// the official AWS SDK for Go v2 (service/bedrockruntime).
//
//	model, err := bedrock.New(provider.Config{Region: "us-east-1"}) // credentials from the standard AWS chain
//
// or with a Bedrock API key, and a model of your choice:
//
//	model, err := bedrock.New(provider.Config{Region: "us-west-2", APIKey: key,
//		Model: "us.amazon.nova-pro-v1:0"})
//
// or chosen from the environment with other providers:
//
//	model, err := provider.FromEnv(openai.Provider(), anthropic.Provider(), bedrock.Provider())
//
// or over an aws.Config the program already has (an assumed role, a custom
// credentials provider):
//
//	awsCfg, err := config.LoadDefaultConfig(ctx, config.WithRegion("eu-west-1"))
//	model, err := bedrock.NewFromConfig(awsCfg, provider.Config{})
//
// # Credentials
//
// Requests are signed with SigV4 by the SDK, with credentials from the
// standard chain (environment, shared config and credentials files, SSO,
// web identity, container and instance roles), unless Config.APIKey holds a
// Bedrock API key, which is sent as "Authorization: Bearer". The SDK itself
// also honours AWS_BEARER_TOKEN_BEDROCK in the environment. Neither the key
// nor the token is ever written to an error, a log line or a name.
//
// # Mapping
//
// Request.System becomes the system blocks, Request.Tools the toolConfig's
// toolSpecs, MaxTokens, Temperature and StopSequences the inferenceConfig.
// Image and document parts, in user messages and tool results, are sent as
// bytes (or an s3:// URL as an S3 location); a part the API cannot take (an
// http URL, audio, an unknown format, a part over Capabilities.MaxPartBytes)
// is described in text. A tool result whose content is a JSON object is
// sent as a json block.
//
// Request.Output is asked for by tool forcing: a tool of the schema's name
// (default "answer") whose input schema is Output.Schema, and a toolChoice
// naming it (or "any" when the request has tools of its own); the tool's
// input is the answer's Message.Text, streamed to OnText as it arrives.
// Claude refuses forced tool use while it reasons, so with Request.Reasoning
// the tool is only offered.
//
// Prompt caching (Anthropic Claude and Amazon Nova models) places cachePoint
// blocks after the system prompt, after the tool definitions (Claude only:
// Nova does not cache tools), after the previous turn's answer and at the
// end of the conversation: four at most, the API's limit. Request.NoCache
// sends none. Usage.InputTokens counts every input token, cached or not;
// CacheReadTokens and CacheWriteTokens say how many were read from or
// written to the cache.
//
// Request.Reasoning turns on Claude's extended thinking (an
// additionalModelRequestFields "thinking" budget; the temperature is then
// left to the model). The reasoning text is Message.Reasoning; the signed
// reasoningContent blocks are kept in Message.Provider and sent back with
// the conversation, as Claude requires.
//
// # Failures
//
// ThrottlingException, ServiceUnavailableException, InternalServerException,
// ModelNotReadyException, ServiceQuotaExceededException and
// ModelStreamErrorException (mid-stream) are Transient; AccessDeniedException
// and signature or token errors PermissionDenied; ModelTimeoutException
// Timeout; a ValidationException saying the prompt exceeds the model's
// context window ("Input is too long") Budget, as in every provider; any
// other ValidationException and refusal Model; missing
// credentials Config. The SDK's own retries are off: Config.Policy retries.
//
// Config.BaseURL replaces the regional endpoint
// (https://bedrock-runtime.{region}.amazonaws.com), e.g. a VPC endpoint or
// a local test server.
package bedrock

import (
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
)

// Name is the provider's name (provider.Config.Provider).
const Name = "bedrock"

// Environment variables read by Provider's Env.
const (
	envToken         = "AWS_BEARER_TOKEN_BEDROCK"
	envModel         = "BEDROCK_MODEL"
	envBaseURL       = "BEDROCK_BASE_URL"
	envRegion        = "AWS_REGION"
	envDefaultRegion = "AWS_DEFAULT_REGION"
	// envProvider is provider's SWITCHBOARD_PROVIDER: naming bedrock there
	// configures it with the standard credentials chain alone.
	envProvider = "SWITCHBOARD_PROVIDER"
)

// New returns the Bedrock model cfg describes (cfg.Provider is ignored),
// loading the AWS configuration (region, credentials chain) the standard
// way; cfg.Region, cfg.APIKey and cfg.HTTPClient override it.
func New(cfg provider.Config) (llm.Model, error) { return newFromEnv(cfg) }

// Provider returns the Bedrock provider for [provider.FromEnv]: it is
// configured by AWS_BEARER_TOKEN_BEDROCK (a Bedrock API key) or
// BEDROCK_MODEL, or by SWITCHBOARD_PROVIDER=bedrock with credentials from
// the standard AWS chain; AWS_REGION (or AWS_DEFAULT_REGION) is the region
// and BEDROCK_BASE_URL overrides the endpoint. Plain AWS credentials in the
// environment do not choose Bedrock by themselves: many programs have them
// for other services.
func Provider() provider.Provider {
	return provider.Provider{
		Name: Name,
		Env: func(lookup func(string) (string, bool)) (provider.Config, bool) {
			cfg := provider.Config{Provider: Name, APIKey: provider.Lookup(lookup, envToken),
				Model: provider.Lookup(lookup, envModel), BaseURL: provider.Lookup(lookup, envBaseURL),
				Region: provider.Lookup(lookup, envRegion)}
			if cfg.Region == "" {
				cfg.Region = provider.Lookup(lookup, envDefaultRegion)
			}
			chosen := provider.Lookup(lookup, envProvider) == Name
			return cfg, cfg.APIKey != "" || cfg.Model != "" || chosen
		},
		Hint: "set AWS_BEARER_TOKEN_BEDROCK or BEDROCK_MODEL, or SWITCHBOARD_PROVIDER=bedrock with AWS credentials (AWS_REGION chooses the region)",
		New:  New,
	}
}
