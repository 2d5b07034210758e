package ollama

import (
	"context"
	"net/http"
	"strings"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/wire"
)

// defaultEmbeddingModel is the embedding model when Config.Model is empty.
const defaultEmbeddingModel = "nomic-embed-text"

// embedBatch bounds the inputs of one /api/embed request.
const embedBatch = 256

// NewEmbedder returns an [llm.Embedder] that speaks Ollama's POST
// /api/embed (BaseURL is the server's root, as for the chat model;
// default http://localhost:11434). Model defaults to nomic-embed-text; an
// APIKey, if set, is sent as a bearer token. It does no I/O.
func NewEmbedder(cfg provider.Config) (llm.Embedder, error) {
	model := cfg.Model
	if model == "" {
		model = defaultEmbeddingModel
	}
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = defaultBaseURL
	}
	base = strings.TrimSuffix(strings.TrimSuffix(base, "/v1"), "/api")
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	name := "ollama/" + model
	e := &embedder{name: name, model: model, url: base + "/api/embed", key: cfg.APIKey, hc: hc, policy: cfg.Policy}
	// statusErr reads Ollama's {"error": "..."} body as the chat model does.
	e.chat = &ollamaModel{name: name, cls: wire.Classifier{Name: name, Scrub: wire.NewScrubber(cfg.APIKey)}}
	return e, nil
}

type embedder struct {
	name, model, url, key string
	hc                    *http.Client
	policy                failure.Policy
	chat                  *ollamaModel
}

// Name returns "ollama/<model>".
func (e *embedder) Name() string { return e.name }

// Embed returns one vector per text.
func (e *embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return e.chat.cls.Embed(ctx, e.policy, texts, embedBatch, e.batch)
}

func (e *embedder) batch(ctx context.Context, texts []string) ([][]float32, error) {
	req, err := e.chat.cls.PostJSON(ctx, e.url, struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}{e.model, texts}, "Ollama")
	if err != nil {
		return nil, err
	}
	if e.key != "" {
		req.Header.Set("authorization", "Bearer "+e.key)
	}
	var out struct {
		Embeddings [][]float32 `json:"embeddings"`
	}
	if err := e.chat.cls.DecodeJSON(ctx, e.hc, req, &out, e.chat.statusErr); err != nil {
		return nil, err
	}
	return out.Embeddings, nil
}
