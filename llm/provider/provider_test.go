package provider_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/anthropic"
	"github.com/switchboard-dev/switchboard/llm/provider/bedrock"
	"github.com/switchboard-dev/switchboard/llm/provider/gemini"
	"github.com/switchboard-dev/switchboard/llm/provider/ollama"
	"github.com/switchboard-dev/switchboard/llm/provider/openai"
)

func TestConfigFromEnv(t *testing.T) {
	both := []provider.Provider{openai.Provider(), anthropic.Provider()}
	all := []provider.Provider{openai.Provider(), anthropic.Provider(), ollama.Provider()}
	tests := []struct {
		name      string
		env       map[string]string
		providers []provider.Provider
		want      provider.Config
		wantErr   string
	}{
		{"nothing set", nil, both, provider.Config{}, "no model provider is configured: set OPENAI_API_KEY"},
		{"no provider linked", map[string]string{"OPENAI_API_KEY": "sk-o"}, nil, provider.Config{}, "no model provider is linked"},
		{"openai", map[string]string{"OPENAI_API_KEY": "sk-o", "OPENAI_MODEL": "gpt-4.1"}, both,
			provider.Config{Provider: "openai", APIKey: "sk-o", Model: "gpt-4.1"}, ""},
		{"ollama needs no key", map[string]string{"OPENAI_BASE_URL": "http://localhost:11434/v1", "OPENAI_MODEL": "qwen3"}, both,
			provider.Config{Provider: "openai", BaseURL: "http://localhost:11434/v1", Model: "qwen3"}, ""},
		{"anthropic", map[string]string{"ANTHROPIC_API_KEY": "sk-a", "ANTHROPIC_BASE_URL": "http://proxy", "ANTHROPIC_MODEL": "claude-x"}, both,
			provider.Config{Provider: "anthropic", APIKey: "sk-a", BaseURL: "http://proxy", Model: "claude-x"}, ""},
		{"both keys: the first provider", map[string]string{"OPENAI_API_KEY": "sk-o", "ANTHROPIC_API_KEY": "sk-a"}, both,
			provider.Config{Provider: "openai", APIKey: "sk-o"}, ""},
		{"both keys: the order of the providers", map[string]string{"OPENAI_API_KEY": "sk-o", "ANTHROPIC_API_KEY": "sk-a"},
			[]provider.Provider{anthropic.Provider(), openai.Provider()}, provider.Config{Provider: "anthropic", APIKey: "sk-a"}, ""},
		{"both keys: forced anthropic", map[string]string{"OPENAI_API_KEY": "sk-o", "ANTHROPIC_API_KEY": "sk-a", "SWITCHBOARD_PROVIDER": "Anthropic"}, both,
			provider.Config{Provider: "anthropic", APIKey: "sk-a"}, ""},
		{"forced provider without its key", map[string]string{"OPENAI_API_KEY": "sk-o", "SWITCHBOARD_PROVIDER": "anthropic"}, both, provider.Config{},
			"SWITCHBOARD_PROVIDER=anthropic but the provider is not configured: set ANTHROPIC_API_KEY"},
		{"forced openai without key or URL", map[string]string{"ANTHROPIC_API_KEY": "sk-a", "SWITCHBOARD_PROVIDER": "openai"}, both, provider.Config{},
			"SWITCHBOARD_PROVIDER=openai but the provider is not configured: set OPENAI_API_KEY"},
		{"unknown provider", map[string]string{"OPENAI_API_KEY": "sk-o", "SWITCHBOARD_PROVIDER": "mistral"}, both, provider.Config{},
			`SWITCHBOARD_PROVIDER="mistral" is not a provider: use one of openai, anthropic`},
		{"ollama native", map[string]string{"OLLAMA_MODEL": "qwen3:8b", "OLLAMA_HOST": "gpu-box"}, all,
			provider.Config{Provider: "ollama", BaseURL: "http://gpu-box:11434", Model: "qwen3:8b"}, ""},
		{"OLLAMA_HOST alone", map[string]string{"OLLAMA_HOST": "0.0.0.0"}, all, provider.Config{}, "set OLLAMA_MODEL"},
		{"forced ollama", map[string]string{"OPENAI_API_KEY": "sk-o", "OLLAMA_MODEL": "llama3.2", "SWITCHBOARD_PROVIDER": "ollama"}, all,
			provider.Config{Provider: "ollama", Model: "llama3.2"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := provider.ConfigFromEnv(func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }, tt.providers...)
			if tt.wantErr != "" {
				if !errors.Is(err, failure.Config) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want a Config failure containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("config = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestFromEnvNames: FromEnv, given every provider, builds from the
// process environment the model of each provider's variables.
func TestFromEnvNames(t *testing.T) {
	for _, k := range []string{"SWITCHBOARD_PROVIDER", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL",
		"OLLAMA_HOST", "OLLAMA_MODEL", "OLLAMA_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GEMINI_BASE_URL", "GEMINI_MODEL",
		"AWS_BEARER_TOKEN_BEDROCK", "BEDROCK_MODEL", "BEDROCK_BASE_URL", "AWS_REGION", "AWS_DEFAULT_REGION"} {
		t.Setenv(k, "")
	}
	every := []provider.Provider{openai.Provider(), anthropic.Provider(), ollama.Provider(), gemini.Provider(), bedrock.Provider()}
	if _, err := provider.FromEnv(every...); !errors.Is(err, failure.Config) {
		t.Fatalf("FromEnv with nothing set: %v, want a Config failure", err)
	}
	tests := []struct {
		env  map[string]string
		name string
	}{
		{map[string]string{"OPENAI_API_KEY": "sk-o"}, "openai/gpt-4o-mini"},
		{map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:1/v1", "OPENAI_MODEL": "llama3.2"}, "openai/llama3.2"},
		{map[string]string{"ANTHROPIC_API_KEY": "sk-a"}, "anthropic/claude-sonnet-4-5"},
		{map[string]string{"OLLAMA_MODEL": "llama3.2"}, "ollama/llama3.2"},
		{map[string]string{"GEMINI_API_KEY": "g-key"}, "gemini/gemini-2.5-flash"},
		{map[string]string{"GOOGLE_API_KEY": "g-key", "GEMINI_MODEL": "gemini-2.5-pro"}, "gemini/gemini-2.5-pro"},
		{map[string]string{"AWS_BEARER_TOKEN_BEDROCK": "tok-1", "AWS_REGION": "us-east-1"}, "bedrock/global.anthropic.claude-sonnet-4-5-20250929-v1:0"},
		{map[string]string{"BEDROCK_MODEL": "amazon.nova-pro-v1:0", "AWS_REGION": "eu-west-1"}, "bedrock/amazon.nova-pro-v1:0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			m, err := provider.FromEnv(every...)
			if err != nil {
				t.Fatal(err)
			}
			if m.Name() != tt.name {
				t.Errorf("name = %q, want %q", m.Name(), tt.name)
			}
		})
	}
}

func TestNewRejects(t *testing.T) {
	tests := []struct {
		name string
		new  func(provider.Config) (llm.Model, error)
		cfg  provider.Config
	}{
		{"anthropic without key", anthropic.New, provider.Config{}},
		{"openai without key or URL", openai.New, provider.Config{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tt.new(tt.cfg); !errors.Is(err, failure.Config) {
				t.Errorf("err = %v, want a Config failure", err)
			}
		})
	}
}
