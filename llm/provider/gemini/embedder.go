package gemini

import (
	"context"
	"strings"

	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
)

// defaultEmbeddingModel is the embedding model when Config.Model is empty.
const defaultEmbeddingModel = "gemini-embedding-001"

// embedBatch is the most requests one batchEmbedContents call takes.
const embedBatch = 100

// NewEmbedder returns an [llm.Embedder] that speaks the Gemini API's POST
// models/{model}:batchEmbedContents (BaseURL as for the chat model).
// Model defaults to gemini-embedding-001; APIKey is required. It does no
// I/O.
func NewEmbedder(cfg provider.Config) (llm.Embedder, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		cfg.Model = defaultEmbeddingModel
	}
	g, err := newGemini(cfg) // the chat model's endpoint, key and error classification
	if err != nil {
		return nil, err
	}
	return &embedder{g: g, url: g.base + ":batchEmbedContents"}, nil
}

// embedder embeds through a Gemini client's configuration.
type embedder struct {
	g   *geminiModel
	url string
}

// Name returns "gemini/<model>".
func (e *embedder) Name() string { return e.g.name }

// Embed returns one vector per text.
func (e *embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return e.g.cls.Embed(ctx, e.g.policy, texts, embedBatch, e.batch)
}

type embedContent struct {
	Model   string `json:"model"`
	Content struct {
		Parts []gmEmbedPart `json:"parts"`
	} `json:"content"`
}

type gmEmbedPart struct {
	Text string `json:"text"`
}

func (e *embedder) batch(ctx context.Context, texts []string) ([][]float32, error) {
	var body struct {
		Requests []embedContent `json:"requests"`
	}
	for _, s := range texts {
		r := embedContent{Model: "models/" + e.g.model}
		r.Content.Parts = []gmEmbedPart{{Text: s}}
		body.Requests = append(body.Requests, r)
	}
	req, err := e.g.cls.PostJSON(ctx, e.url, body, "Gemini")
	if err != nil {
		return nil, err
	}
	req.Header.Set("x-goog-api-key", e.g.key)
	var out struct {
		Embeddings []struct {
			Values []float32 `json:"values"`
		} `json:"embeddings"`
	}
	statusErr := func(status int, b []byte) error { return e.g.statusFailure(status, parseError(b)) }
	if err := e.g.cls.DecodeJSON(ctx, e.g.hc, req, &out, statusErr); err != nil {
		return nil, err
	}
	vecs := make([][]float32, len(out.Embeddings))
	for i, v := range out.Embeddings {
		vecs[i] = v.Values
	}
	return vecs, nil
}
