package openai

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/wire"
)

// defaultEmbeddingModel is the embedding model when Config.Model is empty.
const defaultEmbeddingModel = "text-embedding-3-small"

// embedBatch bounds the inputs of one /embeddings request (the API takes
// up to 2048).
const embedBatch = 512

// NewEmbedder returns an [llm.Embedder] that speaks OpenAI's POST
// /embeddings (BaseURL includes /v1, as for the chat model; any
// OpenAI-compatible server, such as Ollama's /v1, serves it). Model
// defaults to text-embedding-3-small; APIKey is required unless BaseURL is
// set. It does no I/O.
func NewEmbedder(cfg provider.Config) (llm.Embedder, error) {
	if cfg.APIKey == "" && cfg.BaseURL == "" {
		return nil, failure.New(failure.Config, failure.SourceModel,
			"the OpenAI embedder needs an API key (set OPENAI_API_KEY), or a BaseURL of an OpenAI-compatible server")
	}
	model := cfg.Model
	if model == "" {
		model = defaultEmbeddingModel
	}
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = defaultOpenAIBaseURL
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	name := "openai/" + model
	return &embedder{name: name, model: model, url: base + "/embeddings", key: cfg.APIKey, hc: hc, policy: cfg.Policy,
		cls: wire.Classifier{Name: name, Scrub: wire.NewScrubber(cfg.APIKey)}}, nil
}

type embedder struct {
	name, model, url, key string
	hc                    *http.Client
	policy                failure.Policy
	cls                   wire.Classifier
}

// Name returns "openai/<model>".
func (e *embedder) Name() string { return e.name }

// Embed returns one vector per text.
func (e *embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return e.cls.Embed(ctx, e.policy, texts, embedBatch, e.batch)
}

type embedRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
}

type embedResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

func (e *embedder) batch(ctx context.Context, texts []string) ([][]float32, error) {
	req, err := e.cls.PostJSON(ctx, e.url, embedRequest{Model: e.model, Input: texts, EncodingFormat: "float"}, "OpenAI")
	if err != nil {
		return nil, err
	}
	if e.key != "" {
		req.Header.Set("authorization", "Bearer "+e.key)
	}
	var out embedResponse
	if err := e.cls.DecodeJSON(ctx, e.hc, req, &out, nil); err != nil {
		return nil, err
	}
	if len(out.Data) != len(texts) {
		return nil, &failure.Error{Kind: failure.Protocol, Source: failure.SourceModel, Name: e.name, Op: "embed",
			Message: fmt.Sprintf("the provider answered %d embeddings for %d texts", len(out.Data), len(texts))}
	}
	vecs := make([][]float32, len(texts))
	for _, d := range out.Data {
		if d.Index < 0 || d.Index >= len(vecs) || vecs[d.Index] != nil {
			return nil, &failure.Error{Kind: failure.Protocol, Source: failure.SourceModel, Name: e.name, Op: "embed",
				Message: "the provider's embeddings have a missing, repeated or out-of-range index"}
		}
		vecs[d.Index] = d.Embedding
	}
	return vecs, nil
}
