// Package gemini is the [llm.Model] of Google's Gemini API
// (generativelanguage.googleapis.com), spoken directly over REST with
// net/http: no Google SDK, which makes a small program several times larger.
//
//	model, err := gemini.New(provider.Config{APIKey: key, Model: "gemini-2.5-flash"})
//
// or chosen from the environment with other providers:
//
//	model, err := provider.FromEnv(openai.Provider(), anthropic.Provider(), gemini.Provider()) // GEMINI_API_KEY, ...
//
// Config.BaseURL is the API's base without "/v1beta"; the model's name is
// "gemini/<model>". A turn is POST {base}/v1beta/models/{model}:generateContent,
// or :streamGenerateContent?alt=sse when Request.OnText is set, with the key
// in the x-goog-api-key header.
//
// # Mapping
//
// The system prompt is systemInstruction; user and tool messages are
// "user" contents and assistant messages "model" ones (consecutive contents
// of one role are merged). Tools are functionDeclarations whose schema goes
// unchanged in parametersJsonSchema (the JSON Schema field; the older
// OpenAPI-subset "parameters" is not used, so nothing is converted or
// dropped on our side: Gemini ignores the keywords it does not support, and
// the agent validates arguments against the full schema).
//
// Function calls: Gemini's functionCall has an id only in newer API
// versions. A call that comes with an id keeps it; one without gets a
// synthesized ID beginning "gemini-call-", derived from the answer's
// responseId, the turn's position in the conversation and the call's index,
// so that it is stable and unique within a run. Such ids are never sent
// back: the functionResponse parts of a tool message are sent in the order
// of the calls they answer (Gemini matches them by name and order), and
// carry the id only where Gemini gave one. A result's text is the
// response's "output" ("error" when ToolResult.IsError).
//
// Thought signatures: parts of an answer may carry a thoughtSignature that
// must be sent back unchanged in the part it came in. When an answer has
// one (or thought parts), its parts as received (stream chunks merged) are
// kept in Message.Provider as {"gemini":{"parts":[...]}}, and sent back
// verbatim as long as the message's Text and ToolCalls are still those the
// parts hold; a message that was changed is rebuilt from its fields, each
// call keeping the signature of the call it replaces (same position and
// name). Other providers ignore that object.
//
// Media: image, audio and document parts of user messages become
// inlineData (base64 and mimeType, sniffed when the part has none) or,
// with a URL, fileData (fileUri: a Files API or other https: URL, or a
// registered gs: object); a part at another URL, or with neither, is
// described in text. In tool results, Gemini 3 and later
// models take them inside the functionResponse (its "parts"); for earlier
// models they follow the function responses in the same user turn, each
// after a text part naming the call.
//
// Structured output (Request.Output) is responseMimeType
// "application/json" with responseJsonSchema. Models before Gemini 3 reject
// JSON mode together with function calling, so for them a turn that also
// offers tools asks for the schema in the system instruction instead (the
// caller validates the answer either way).
//
// Reasoning (Request.Reasoning), for Gemini 2.5 and later models, is
// thinkingConfig with includeThoughts, so that thought summaries reach
// Message.Reasoning (never the answer's Text). Gemini 3 and later models
// take an Effort as thinkingLevel (minimal and low: "low", medium:
// "medium", high: "high"; "minimal" is refused by several of them), and a
// BudgetTokens alone as thinkingBudget; Gemini 2.5 models take a
// thinkingBudget: BudgetTokens, or for an Effort minimal 512, low 1024,
// medium 8192, high 24576 (inside the ranges of 2.5 Pro, 128-32768, Flash,
// 0-24576, and Flash-Lite, 512-24576), or -1 (dynamic) for neither. The
// budget and maxOutputTokens draw on the same allowance.
//
// Usage: promptTokenCount (plus toolUsePromptTokenCount) is InputTokens,
// of which cachedContentTokenCount (implicit caching) is CacheReadTokens;
// candidatesTokenCount plus thoughtsTokenCount is OutputTokens, of which
// thoughtsTokenCount is ReasoningTokens. StopReason is the finishReason as
// reported ("STOP", "MAX_TOKENS", "SAFETY", ...). A prompt Gemini blocked
// (promptFeedback.blockReason), or an answer with no content that stopped
// for another reason than STOP or MAX_TOKENS (SAFETY, RECITATION,
// MALFORMED_FUNCTION_CALL, ...), is a failure.Model error naming the
// reason.
//
// Request.CacheKey and Request.NoCache have no counterpart: Gemini's
// implicit caching needs no key and cannot be turned off per request.
//
// Errors: Gemini's error body ({"error":{"code","message","status"}}) is
// classified as every provider's (429 RESOURCE_EXHAUSTED and 5xx
// Transient, 403 PermissionDenied, other 4xx Model), except that a 400 for
// an invalid API key (API_KEY_INVALID) is PermissionDenied and a prompt past
// the context window ("The input token count ... exceeds the maximum") is
// failure.Budget, as in every provider.
package gemini

import (
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
)

// Name is the provider's name (provider.Config.Provider).
const Name = "gemini"

// Environment variables read by Provider's Env.
const (
	envKey       = "GEMINI_API_KEY"
	envGoogleKey = "GOOGLE_API_KEY"
	envBaseURL   = "GEMINI_BASE_URL"
	envModel     = "GEMINI_MODEL"
	// envEmbeddingModel chooses the embedding model (EmbedderFromEnv).
	envEmbeddingModel = "GEMINI_EMBEDDING_MODEL"
)

// New returns the Gemini model cfg describes (cfg.Provider is ignored).
// cfg.APIKey is required; cfg.Model defaults to gemini-2.5-flash.
func New(cfg provider.Config) (llm.Model, error) { return newGemini(cfg) }

// Provider returns the Gemini provider for [provider.FromEnv]: it is
// configured by GEMINI_API_KEY (or GOOGLE_API_KEY); GEMINI_BASE_URL and
// GEMINI_MODEL override the endpoint and the model. Its embedder
// ([NewEmbedder], for provider.EmbedderFromEnv) is configured the same way,
// and GEMINI_EMBEDDING_MODEL chooses its model (default gemini-embedding-001).
func Provider() provider.Provider {
	return provider.Provider{
		Name: Name,
		Env: func(lookup func(string) (string, bool)) (provider.Config, bool) {
			return envConfig(lookup, envModel)
		},
		Hint: "set GEMINI_API_KEY or GOOGLE_API_KEY (GEMINI_MODEL chooses the model)",
		New:  New,
		EmbedderEnv: func(lookup func(string) (string, bool)) (provider.Config, bool) {
			return envConfig(lookup, envEmbeddingModel)
		},
		EmbedderHint: "set GEMINI_API_KEY or GOOGLE_API_KEY (GEMINI_EMBEDDING_MODEL chooses the model)",
		NewEmbedder:  NewEmbedder,
	}
}

// envConfig is the Config the environment gives, with the model named by
// modelVar.
func envConfig(lookup func(string) (string, bool), modelVar string) (provider.Config, bool) {
	key := provider.Lookup(lookup, envKey)
	if key == "" {
		key = provider.Lookup(lookup, envGoogleKey)
	}
	cfg := provider.Config{Provider: Name, APIKey: key,
		BaseURL: provider.Lookup(lookup, envBaseURL), Model: provider.Lookup(lookup, modelVar)}
	return cfg, cfg.APIKey != ""
}
