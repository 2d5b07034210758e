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
)

// New returns the OpenAI model cfg describes (cfg.Provider is ignored).
func New(cfg provider.Config) (llm.Model, error) { return newOpenAI(cfg) }

// Provider returns the OpenAI provider for [provider.FromEnv]: it is
// configured by OPENAI_API_KEY, or by OPENAI_BASE_URL alone for a local
// OpenAI-compatible server (Ollama: http://localhost:11434/v1); OPENAI_MODEL
// chooses the model.
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
	}
}
