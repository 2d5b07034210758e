package llm

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/agent/failure"
)

func TestConfigFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    Config
		wantErr string
	}{
		{"nothing set", nil, Config{}, "no model provider is configured: set OPENAI_API_KEY"},
		{"openai", map[string]string{EnvOpenAIKey: "sk-o", EnvOpenAIModel: "gpt-4.1"},
			Config{Provider: ProviderOpenAI, APIKey: "sk-o", Model: "gpt-4.1"}, ""},
		{"ollama needs no key", map[string]string{EnvOpenAIBaseURL: "http://localhost:11434/v1", EnvOpenAIModel: "qwen3"},
			Config{Provider: ProviderOpenAI, BaseURL: "http://localhost:11434/v1", Model: "qwen3"}, ""},
		{"anthropic", map[string]string{EnvAnthropicKey: "sk-a", EnvAnthropicBaseURL: "http://proxy", EnvAnthropicModel: "claude-x"},
			Config{Provider: ProviderAnthropic, APIKey: "sk-a", BaseURL: "http://proxy", Model: "claude-x"}, ""},
		{"both keys: openai by default", map[string]string{EnvOpenAIKey: "sk-o", EnvAnthropicKey: "sk-a"},
			Config{Provider: ProviderOpenAI, APIKey: "sk-o"}, ""},
		{"both keys: forced anthropic", map[string]string{EnvOpenAIKey: "sk-o", EnvAnthropicKey: "sk-a", EnvProvider: "Anthropic"},
			Config{Provider: ProviderAnthropic, APIKey: "sk-a"}, ""},
		{"anthropic key beats an openai base URL alone", map[string]string{EnvOpenAIBaseURL: "http://x/v1", EnvAnthropicKey: "sk-a"},
			Config{Provider: ProviderAnthropic, APIKey: "sk-a"}, ""},
		{"forced provider without its key", map[string]string{EnvOpenAIKey: "sk-o", EnvProvider: "anthropic"}, Config{},
			"SWITCHBOARD_PROVIDER=anthropic but ANTHROPIC_API_KEY is not set"},
		{"forced openai without key or URL", map[string]string{EnvAnthropicKey: "sk-a", EnvProvider: "openai"}, Config{},
			"SWITCHBOARD_PROVIDER=openai but neither"},
		{"unknown provider", map[string]string{EnvOpenAIKey: "sk-o", EnvProvider: "gemini"}, Config{}, `SWITCHBOARD_PROVIDER="gemini" is not a provider`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ConfigFromEnv(func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
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

func TestFromEnvNames(t *testing.T) {
	for _, k := range []string{EnvProvider, EnvOpenAIKey, EnvOpenAIBaseURL, EnvOpenAIModel, EnvAnthropicKey, EnvAnthropicBaseURL, EnvAnthropicModel} {
		t.Setenv(k, "")
	}
	if _, err := FromEnv(); !errors.Is(err, failure.Config) {
		t.Fatalf("FromEnv with nothing set: %v, want a Config failure", err)
	}
	tests := []struct {
		env  map[string]string
		name string
	}{
		{map[string]string{EnvOpenAIKey: "sk-o"}, "openai/" + DefaultOpenAIModel},
		{map[string]string{EnvOpenAIBaseURL: "http://127.0.0.1:1/v1", EnvOpenAIModel: "llama3.2"}, "openai/llama3.2"},
		{map[string]string{EnvAnthropicKey: "sk-a"}, "anthropic/" + DefaultAnthropicModel},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			m, err := FromEnv()
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
		cfg  Config
	}{
		{"unknown provider", Config{Provider: "gemini", APIKey: "k"}},
		{"anthropic without key", Config{Provider: ProviderAnthropic}},
		{"openai without key or URL", Config{Provider: ProviderOpenAI}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(t.Context(), tt.cfg); !errors.Is(err, failure.Config) {
				t.Errorf("err = %v, want a Config failure", err)
			}
		})
	}
	if _, err := NewLangChain(t.Context(), LangChainConfig{}); !errors.Is(err, failure.Config) {
		t.Errorf("NewLangChain without a model: %v", err)
	}
}
