// Package anthropic is the [llm.Model] of Anthropic's Messages API, spoken
// directly (langchaingo v0.1.14 drops every part of an assistant message
// after the first).
//
//	model, err := anthropic.New(provider.Config{APIKey: key, Model: "claude-sonnet-4-5"})
//
// or chosen from the environment with other providers:
//
//	model, err := provider.FromEnv(openai.Provider(), anthropic.Provider())
//
// Config.BaseURL is the API's base without "/v1".
//
// # Prompt caching
//
// Every request marks its stable prefix with cache_control breakpoints,
// unless [llm.Request.NoCache] is set: the last tool definition, the system
// prompt, the history up to the previous turn, and the newest message (so
// that the next turn reads this one from the cache): at most 4, the API's
// limit. The prefix is marshalled deterministically (tools in the order
// given, then the system prompt, then the messages, each the same bytes
// for the same conversation), so that a conversation that only grows reads
// all of its previous turn from the cache. Usage reports the reads and the
// writes apart (CacheReadTokens, CacheWriteTokens), counted in InputTokens.
//
// The cache breaks, and the next request writes it again from the first
// point of difference, when:
//
//   - the tool set changes (a tool added, removed, reordered or
//     redescribed, or a deferred tool defined outright because compaction
//     dropped the search result that found it): everything is written
//     again;
//   - the system prompt changes: the system prompt and the messages are;
//   - compaction rewrites the history (old turns replaced by their
//     summary): the messages from the first rewritten one on are, once per
//     compaction;
//   - the thinking setting, tool_choice or the answer's schema
//     (Request.Output) changes from one request to the next, which the API
//     counts as a change of the messages; a forced answer tool (below) is
//     a change of the tool set for that request;
//   - nothing reads it for 5 minutes (a read renews it), or the prefix is
//     shorter than the model's least cacheable length (1024 to 4096
//     tokens, by model), in which case it is not cached at all.
//
// Request.CacheKey has no counterpart in the Messages API and is not sent.
//
// # Structured output
//
// [llm.Request.Output] is sent as output_config.format (a JSON Schema the
// answer is constrained to) to the models that take it, Claude Sonnet 4.5,
// Opus 4.5, Haiku 4.5 and later; the answer is its text. Older models get a
// tool named after Output.Name with the schema as its input and a
// tool_choice that forces a tool call (that tool, or any tool when the
// request has others); the call's input becomes the answer's text, and
// streams through OnText. With thinking on the API forbids forcing a tool:
// the answer tool is then only offered.
//
// # Parts
//
// Images (JPEG, PNG, GIF, WebP; bytes or URL) and documents (PDF bytes or
// URL; text files as plain text) go as image and document blocks in user
// messages and inside tool results; other parts are described in text. The
// API caps an image at 5 MB once encoded, so [llm.Capabilities.MaxPartBytes]
// is 3.75 MB.
//
// # Reasoning
//
// [llm.Request.Reasoning] turns on extended thinking: a budget of tokens
// for models before the 4.6 series (Effort minimal 1024, low 2048, medium
// 8192, high 24576, or BudgetTokens; max_tokens raised past the budget when
// it is not), adaptive thinking at an effort from the 4.6 series on. The
// signed thinking blocks are kept in [llm.Message.Provider] and sent back
// as they came, before the turn's text and tool calls; their text is
// [llm.Message.Reasoning], never the answer. A temperature and a forced
// tool_choice are dropped, as the API refuses them with thinking.
//
// # Failures
//
// A prompt past the context window ("prompt is too long") is a
// failure.Budget that says so, as in every provider; 429, 529 and other 5xx are failure.Transient.
package anthropic

import (
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
)

// Name is the provider's name (provider.Config.Provider).
const Name = "anthropic"

// Environment variables read by Provider's Env.
const (
	envKey     = "ANTHROPIC_API_KEY"
	envBaseURL = "ANTHROPIC_BASE_URL"
	envModel   = "ANTHROPIC_MODEL"
)

// New returns the Anthropic model cfg describes (cfg.Provider is ignored).
func New(cfg provider.Config) (llm.Model, error) { return newAnthropic(cfg) }

// Provider returns the Anthropic provider for [provider.FromEnv]: it is
// configured by ANTHROPIC_API_KEY; ANTHROPIC_BASE_URL and ANTHROPIC_MODEL
// override the endpoint and the model.
func Provider() provider.Provider {
	return provider.Provider{
		Name: Name,
		Env: func(lookup func(string) (string, bool)) (provider.Config, bool) {
			cfg := provider.Config{Provider: Name, APIKey: provider.Lookup(lookup, envKey),
				BaseURL: provider.Lookup(lookup, envBaseURL), Model: provider.Lookup(lookup, envModel)}
			return cfg, cfg.APIKey != ""
		},
		Hint: "set ANTHROPIC_API_KEY (ANTHROPIC_MODEL chooses the model)",
		New:  New,
	}
}
