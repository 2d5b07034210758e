package provider

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/failure"
)

func TestConfigFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    Config
		wantErr string
	}{
		{"nothing set", nil, Config{}, "no model provider is configured: set OPENAI_API_KEY"},
		{"openai", map[string]string{envOpenAIKey: "sk-o", envOpenAIModel: "gpt-4.1"},
			Config{Provider: nameOpenAI, APIKey: "sk-o", Model: "gpt-4.1"}, ""},
		{"ollama needs no key", map[string]string{envOpenAIBaseURL: "http://localhost:11434/v1", envOpenAIModel: "qwen3"},
			Config{Provider: nameOpenAI, BaseURL: "http://localhost:11434/v1", Model: "qwen3"}, ""},
		{"anthropic", map[string]string{envAnthropicKey: "sk-a", envAnthropicBaseURL: "http://proxy", envAnthropicModel: "claude-x"},
			Config{Provider: nameAnthropic, APIKey: "sk-a", BaseURL: "http://proxy", Model: "claude-x"}, ""},
		{"both keys: openai by default", map[string]string{envOpenAIKey: "sk-o", envAnthropicKey: "sk-a"},
			Config{Provider: nameOpenAI, APIKey: "sk-o"}, ""},
		{"both keys: forced anthropic", map[string]string{envOpenAIKey: "sk-o", envAnthropicKey: "sk-a", envProvider: "Anthropic"},
			Config{Provider: nameAnthropic, APIKey: "sk-a"}, ""},
		{"anthropic key beats an openai base URL alone", map[string]string{envOpenAIBaseURL: "http://x/v1", envAnthropicKey: "sk-a"},
			Config{Provider: nameAnthropic, APIKey: "sk-a"}, ""},
		{"forced provider without its key", map[string]string{envOpenAIKey: "sk-o", envProvider: "anthropic"}, Config{},
			"SWITCHBOARD_PROVIDER=anthropic but ANTHROPIC_API_KEY is not set"},
		{"forced openai without key or URL", map[string]string{envAnthropicKey: "sk-a", envProvider: "openai"}, Config{},
			"SWITCHBOARD_PROVIDER=openai but neither"},
		{"unknown provider", map[string]string{envOpenAIKey: "sk-o", envProvider: "gemini"}, Config{}, `SWITCHBOARD_PROVIDER="gemini" is not a provider`},
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
	for _, k := range []string{envProvider, envOpenAIKey, envOpenAIBaseURL, envOpenAIModel, envAnthropicKey, envAnthropicBaseURL, envAnthropicModel} {
		t.Setenv(k, "")
	}
	if _, err := FromEnv(); !errors.Is(err, failure.Config) {
		t.Fatalf("FromEnv with nothing set: %v, want a Config failure", err)
	}
	tests := []struct {
		env  map[string]string
		name string
	}{
		{map[string]string{envOpenAIKey: "sk-o"}, "openai/" + defaultOpenAIModel},
		{map[string]string{envOpenAIBaseURL: "http://127.0.0.1:1/v1", envOpenAIModel: "llama3.2"}, "openai/llama3.2"},
		{map[string]string{envAnthropicKey: "sk-a"}, "anthropic/" + defaultAnthropicModel},
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
		{"anthropic without key", Config{Provider: nameAnthropic}},
		{"openai without key or URL", Config{Provider: nameOpenAI}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.cfg); !errors.Is(err, failure.Config) {
				t.Errorf("err = %v, want a Config failure", err)
			}
		})
	}
	if _, err := newLangChain(langChainConfig{}); !errors.Is(err, failure.Config) {
		t.Errorf("newLangChain without a model: %v", err)
	}
}
