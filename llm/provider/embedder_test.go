package provider_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/anthropic"
	"github.com/switchboard-dev/switchboard/llm/provider/gemini"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/providertest"
	"github.com/switchboard-dev/switchboard/llm/provider/ollama"
	"github.com/switchboard-dev/switchboard/llm/provider/openai"
)

func TestEmbedderConfigFromEnv(t *testing.T) {
	all := []provider.Provider{anthropic.Provider(), openai.Provider(), ollama.Provider(), gemini.Provider()}
	tests := []struct {
		name      string
		env       map[string]string
		providers []provider.Provider
		want      provider.Config
		wantErr   string
	}{
		{"nothing set", nil, all, provider.Config{}, "no embedder is configured: set OPENAI_API_KEY"},
		{"no embedder linked", map[string]string{"ANTHROPIC_API_KEY": "sk-a"}, []provider.Provider{anthropic.Provider()},
			provider.Config{}, "no embedder provider is linked"},
		{"anthropic has none: openai", map[string]string{"ANTHROPIC_API_KEY": "sk-a", "OPENAI_API_KEY": "sk-o", "OPENAI_MODEL": "gpt-4.1"}, all,
			provider.Config{Provider: "openai", APIKey: "sk-o"}, ""},
		{"the embedding model, not the chat model", map[string]string{"OPENAI_API_KEY": "sk-o", "OPENAI_MODEL": "gpt-4.1",
			"OPENAI_EMBEDDING_MODEL": "text-embedding-3-large"}, all,
			provider.Config{Provider: "openai", APIKey: "sk-o", Model: "text-embedding-3-large"}, ""},
		{"ollama by its embedding model", map[string]string{"OLLAMA_MODEL": "qwen3", "OLLAMA_EMBEDDING_MODEL": "nomic-embed-text", "OLLAMA_HOST": "gpu-box"}, all,
			provider.Config{Provider: "ollama", BaseURL: "http://gpu-box:11434", Model: "nomic-embed-text"}, ""},
		{"ollama's chat model alone", map[string]string{"OLLAMA_MODEL": "qwen3"}, all, provider.Config{}, "set OLLAMA_EMBEDDING_MODEL"},
		{"gemini", map[string]string{"GOOGLE_API_KEY": "g-k", "GEMINI_EMBEDDING_MODEL": "text-embedding-004"}, all,
			provider.Config{Provider: "gemini", APIKey: "g-k", Model: "text-embedding-004"}, ""},
		{"chat with anthropic, embed with gemini", map[string]string{"OPENAI_API_KEY": "sk-o", "GEMINI_API_KEY": "g-k",
			"SWITCHBOARD_PROVIDER": "anthropic", "SWITCHBOARD_EMBEDDER": "Gemini"}, all,
			provider.Config{Provider: "gemini", APIKey: "g-k"}, ""},
		{"forced without its settings", map[string]string{"OPENAI_API_KEY": "sk-o", "SWITCHBOARD_EMBEDDER": "ollama"}, all, provider.Config{},
			"SWITCHBOARD_EMBEDDER=ollama but the provider is not configured: set OLLAMA_EMBEDDING_MODEL"},
		{"forced a provider without an embedder", map[string]string{"OPENAI_API_KEY": "sk-o", "SWITCHBOARD_EMBEDDER": "anthropic"}, all, provider.Config{},
			`SWITCHBOARD_EMBEDDER="anthropic" is not a provider with an embedder: use one of openai, ollama, gemini`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := provider.EmbedderConfigFromEnv(func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }, tt.providers...)
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

// TestEmbedderFromEnv: the embedder the environment names embeds through
// the server it names (a local one speaking Ollama's /api/embed).
func TestEmbedderFromEnv(t *testing.T) {
	for _, k := range []string{"SWITCHBOARD_EMBEDDER", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_EMBEDDING_MODEL",
		"OLLAMA_HOST", "OLLAMA_EMBEDDING_MODEL", "OLLAMA_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GEMINI_EMBEDDING_MODEL"} {
		t.Setenv(k, "")
	}
	ps := []provider.Provider{openai.Provider(), ollama.Provider(), gemini.Provider()}
	if _, err := provider.EmbedderFromEnv(ps...); !errors.Is(err, failure.Config) {
		t.Fatalf("EmbedderFromEnv with nothing set: %v, want a Config failure", err)
	}
	srv := providertest.NewServer(t, providertest.Reply{Status: 200, ContentType: "application/json",
		Body: []byte(`{"model":"all-minilm","embeddings":[[0.5,-1]]}`)})
	t.Setenv("OLLAMA_HOST", srv.URL)
	t.Setenv("OLLAMA_EMBEDDING_MODEL", "all-minilm")
	e, err := provider.EmbedderFromEnv(ps...)
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Embed(context.Background(), []string{"delete a file"})
	if err != nil || !reflect.DeepEqual(got, [][]float32{{0.5, -1}}) {
		t.Fatalf("Embed = %v, %v", got, err)
	}
	if reqs := srv.Requests(); len(reqs) != 1 || reqs[0].Path != "/api/embed" {
		t.Fatalf("requests = %+v", reqs)
	}
	t.Logf("embedder %s", e.Name())
	t.Setenv("OPENAI_API_KEY", "sk-o")
	t.Setenv("SWITCHBOARD_EMBEDDER", "openai")
	if e, err := provider.EmbedderFromEnv(ps...); err != nil || !strings.Contains(e.Name(), "text-embedding-3-small") {
		t.Errorf("SWITCHBOARD_EMBEDDER=openai: %v, %v", e, err)
	}
}
