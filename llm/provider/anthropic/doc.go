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
