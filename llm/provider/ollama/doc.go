// Package ollama is the [llm.Model] of a local Ollama server, through its
// native REST API (POST /api/chat): tool calls, answer schemas (Ollama's
// "format", which constrains decoding), images, thinking, and streaming as
// newline-delimited JSON.
//
//	model, err := ollama.New(provider.Config{Model: "qwen3:8b"}) // http://localhost:11434
//
// or chosen from the environment with other providers:
//
//	model, err := provider.FromEnv(openai.Provider(), anthropic.Provider(), ollama.Provider()) // OLLAMA_MODEL, OLLAMA_HOST
//
// Config.BaseURL is the server's root ("http://localhost:11434", without
// "/api"); Config.APIKey, if set, goes as a bearer token (a server behind
// a proxy, or ollama.com's API). Config.MaxTokens is ignored: the server's
// num_predict applies unless a Request sets MaxTokens.
//
// It speaks the API directly rather than through langchaingo's ollama
// client, which (v0.1.14) sends no tools and reads no tool calls, takes
// "format" as a string only (so no schema), and puts "think" among the
// model options, where the server does not read it. It needs no
// dependency beyond the standard library.
//
// # What Ollama does not say
//
// The server does not report cached prompt tokens (it reuses its KV cache
// silently, and then reports only the prompt tokens it evaluated, so
// Usage.InputTokens can be low on a turn that shares a prefix with the
// last) nor reasoning tokens apart (Usage.OutputTokens includes them). It
// cuts a prompt longer than the model's num_ctx instead of failing, and the
// window is the server's setting, not the model's: Capabilities leaves
// ContextWindow 0, and the agent uses the window it knows for the model's
// name, which may be larger than the server's num_ctx (set num_ctx in a
// Modelfile, or OLLAMA_CONTEXT_LENGTH, to match). What a model accepts
// (images, thinking) is judged by its name (the families the
// model's Capabilities method lists); a model of another name is taken to
// accept text only, and Request.Reasoning is ignored for it.
package ollama

import (
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
)

// Name is the provider's name (provider.Config.Provider).
const Name = "ollama"

// Environment variables read by Provider's Env.
const (
	envHost  = "OLLAMA_HOST"
	envModel = "OLLAMA_MODEL"
	envKey   = "OLLAMA_API_KEY"
	// envEmbeddingModel chooses, and configures, the embedder.
	envEmbeddingModel = "OLLAMA_EMBEDDING_MODEL"
)

// New returns the Ollama model cfg describes (cfg.Provider is ignored).
func New(cfg provider.Config) (llm.Model, error) { return newOllama(cfg) }

// Provider returns the Ollama provider for [provider.FromEnv]: it is
// configured by OLLAMA_MODEL (the model to run); OLLAMA_HOST is the server
// as Ollama's own client reads it ("host:port", "http://host:port", ...;
// default http://localhost:11434), and OLLAMA_API_KEY, if set, is sent as a
// bearer token. OLLAMA_HOST alone does not configure it: on a machine that
// runs the server it only says where the server listens. Its embedder
// ([NewEmbedder], for provider.EmbedderFromEnv) is configured by
// OLLAMA_EMBEDDING_MODEL (nomic-embed-text, ...), at the same host.
func Provider() provider.Provider {
	return provider.Provider{
		Name: Name,
		Env: func(lookup func(string) (string, bool)) (provider.Config, bool) {
			cfg := provider.Config{Provider: Name, Model: provider.Lookup(lookup, envModel),
				APIKey: provider.Lookup(lookup, envKey)}
			if h := provider.Lookup(lookup, envHost); h != "" {
				cfg.BaseURL = hostURL(h)
			}
			return cfg, cfg.Model != ""
		},
		Hint: "set OLLAMA_MODEL for a local Ollama server (OLLAMA_HOST if it is not at " + defaultBaseURL + ")",
		New:  New,
		EmbedderEnv: func(lookup func(string) (string, bool)) (provider.Config, bool) {
			cfg := provider.Config{Provider: Name, Model: provider.Lookup(lookup, envEmbeddingModel),
				APIKey: provider.Lookup(lookup, envKey)}
			if h := provider.Lookup(lookup, envHost); h != "" {
				cfg.BaseURL = hostURL(h)
			}
			return cfg, cfg.Model != ""
		},
		EmbedderHint: "set OLLAMA_EMBEDDING_MODEL for a local Ollama server (OLLAMA_HOST if it is not at " + defaultBaseURL + ")",
		NewEmbedder:  NewEmbedder,
	}
}
