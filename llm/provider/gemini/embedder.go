package gemini

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/wire"
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
	if cfg.APIKey == "" {
		return nil, failure.New(failure.Config, failure.SourceModel, "the Gemini embedder needs an API key (set GEMINI_API_KEY or GOOGLE_API_KEY)")
	}
	model := strings.TrimPrefix(strings.TrimSpace(cfg.Model), "models/")
	if model == "" {
		model = defaultEmbeddingModel
	}
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = defaultBaseURL
	}
	base = strings.TrimSuffix(base, "/"+apiVersion)
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	name := Name + "/" + model
	// g classifies failures as the chat model does (Gemini's error envelope).
	g := &geminiModel{name: name, cls: wire.Classifier{Name: name, Scrub: wire.NewScrubber(cfg.APIKey)}}
	return &embedder{g: g, model: model, key: cfg.APIKey, hc: hc, policy: cfg.Policy,
		url: base + "/" + apiVersion + "/models/" + url.PathEscape(model) + ":batchEmbedContents"}, nil
}

type embedder struct {
	g               *geminiModel
	model, url, key string
	hc              *http.Client
	policy          failure.Policy
}

// Name returns "gemini/<model>".
func (e *embedder) Name() string { return e.g.name }

// Embed returns one vector per text.
func (e *embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return e.g.cls.Embed(ctx, e.policy, texts, embedBatch, e.batch)
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
		r := embedContent{Model: "models/" + e.model}
		r.Content.Parts = []gmEmbedPart{{Text: s}}
		body.Requests = append(body.Requests, r)
	}
	req, err := e.g.cls.PostJSON(ctx, e.url, body, "Gemini")
	if err != nil {
		return nil, err
	}
	req.Header.Set("x-goog-api-key", e.key)
	var out struct {
		Embeddings []struct {
			Values []float32 `json:"values"`
		} `json:"embeddings"`
	}
	statusErr := func(status int, b []byte) error { return e.g.statusFailure(status, parseError(b)) }
	if err := e.g.cls.DecodeJSON(ctx, e.hc, req, &out, statusErr); err != nil {
		return nil, err
	}
	vecs := make([][]float32, len(out.Embeddings))
	for i, v := range out.Embeddings {
		vecs[i] = v.Values
	}
	return vecs, nil
}
