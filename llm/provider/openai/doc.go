// Package openai is the [llm.Model] of OpenAI's chat completions API,
// through github.com/tmc/langchaingo, and of any OpenAI-compatible server
// (Ollama's /v1, vLLM, llama.cpp, Gemini's OpenAI endpoint). Turns that
// defer tools to OpenAI's own tool search go to its Responses API.
//
//	model, err := openai.New(provider.Config{APIKey: key, Model: "gpt-4o-mini"})
//
// or chosen from the environment with other providers:
//
//	model, err := provider.FromEnv(openai.Provider(), anthropic.Provider())
//
// Config.BaseURL goes up to and including "/v1"; a server given a BaseURL
// may be given no APIKey.
//
// # The model layer
//
//   - Request.Output goes as a json_schema response format (the Responses
//     API's text.format), strict when the schema is in strict mode's subset
//     (every object closed with additionalProperties false and all its
//     properties required, no allOf, oneOf, not, if/then/else, ...), and
//     strict false otherwise: the schema is not rewritten. A model that
//     declines to answer (the answer's "refusal") fails the call with kind
//     failure.Model and its words.
//   - Parts: images (data: URL or URL), WAV and MP3 audio, PDFs (as a file
//     with its data) and text documents (inlined); what the API cannot
//     carry (audio or a PDF by URL, a part over 20 MB) is described in
//     text. A tool message takes text only, so a tool result's media go in
//     a user message after the turn's tool messages, introduced by the call
//     they answer.
//   - Request.CacheKey is sent as prompt_cache_key (not with NoCache);
//     Usage.CacheReadTokens and ReasoningTokens come from the usage's
//     details, streamed too. OpenAI caches prompt prefixes of 1024 tokens
//     and more by itself.
//   - Request.Reasoning is sent as reasoning_effort to the reasoning models
//     (o-series, GPT-5), and ignored for others.
//   - A prompt longer than the context window (context_length_exceeded)
//     fails with kind failure.Budget, as the agent's own check does.
//
// prompt_cache_key and reasoning_effort go only to models of OpenAI's
// names (gpt-*, o1, o3, ...), since an OpenAI-compatible server may refuse
// fields it does not know; Capabilities is likewise judged by the name.
// langchaingo v0.1.14 has no per-call way to send these fields or the
// parts, so the adapter completes the body langchaingo builds in its HTTP
// client (chat_body.go).
package openai

import (
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
)

// Name is the provider's name (provider.Config.Provider).
const Name = "openai"

// Environment variables read by Provider's Env.
const (
	envKey     = "OPENAI_API_KEY"
	envBaseURL = "OPENAI_BASE_URL"
	envModel   = "OPENAI_MODEL"
	// envEmbeddingModel chooses the embedding model (EmbedderFromEnv).
	envEmbeddingModel = "OPENAI_EMBEDDING_MODEL"
)

// New returns the OpenAI model cfg describes (cfg.Provider is ignored).
func New(cfg provider.Config) (llm.Model, error) { return newOpenAI(cfg) }

// Provider returns the OpenAI provider for [provider.FromEnv]: it is
// configured by OPENAI_API_KEY, or by OPENAI_BASE_URL alone for a local
// OpenAI-compatible server (Ollama: http://localhost:11434/v1); OPENAI_MODEL
// chooses the model. Its embedder ([NewEmbedder], for
// provider.EmbedderFromEnv) is configured the same way, and
// OPENAI_EMBEDDING_MODEL chooses its model (default text-embedding-3-small).
func Provider() provider.Provider {
	return provider.Provider{
		Name: Name,
		Env: func(lookup func(string) (string, bool)) (provider.Config, bool) {
			cfg := provider.Config{Provider: Name, APIKey: provider.Lookup(lookup, envKey),
				BaseURL: provider.Lookup(lookup, envBaseURL), Model: provider.Lookup(lookup, envModel)}
			return cfg, cfg.APIKey != "" || cfg.BaseURL != ""
		},
		Hint: "set OPENAI_API_KEY (or OPENAI_BASE_URL for Ollama and other OpenAI-compatible servers; OPENAI_MODEL chooses the model)",
		New:  New,
		EmbedderEnv: func(lookup func(string) (string, bool)) (provider.Config, bool) {
			cfg := provider.Config{Provider: Name, APIKey: provider.Lookup(lookup, envKey),
				BaseURL: provider.Lookup(lookup, envBaseURL), Model: provider.Lookup(lookup, envEmbeddingModel)}
			return cfg, cfg.APIKey != "" || cfg.BaseURL != ""
		},
		EmbedderHint: "set OPENAI_API_KEY (or OPENAI_BASE_URL; OPENAI_EMBEDDING_MODEL chooses the model)",
		NewEmbedder:  NewEmbedder,
	}
}
