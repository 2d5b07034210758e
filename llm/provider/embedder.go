package provider

import (
	"os"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// envEmbedder names the provider of the embedder when the environment
// configures several (SWITCHBOARD_EMBEDDER=openai|ollama|gemini).
const envEmbedder = "SWITCHBOARD_EMBEDDER"

// EmbedderFromEnv returns the embedder the environment configures, among
// the providers that have one; see [EmbedderConfigFromEnv].
//
//	emb, err := provider.EmbedderFromEnv(openai.Provider(), ollama.Provider())
//	a, err := agent.New(ctx, agent.Config{..., Embedder: emb})
func EmbedderFromEnv(providers ...Provider) (llm.Embedder, error) {
	cfg, err := EmbedderConfigFromEnv(os.LookupEnv, providers...)
	if err != nil {
		return nil, err
	}
	for _, p := range providers {
		if p.Name == cfg.Provider && p.NewEmbedder != nil {
			return p.NewEmbedder(cfg)
		}
	}
	return nil, failure.New(failure.Internal, failure.SourceModel, "embedder provider "+cfg.Provider+" configured but not offered")
}

// EmbedderConfigFromEnv reads an embedder's Config through lookup, as
// [ConfigFromEnv] does a model's: SWITCHBOARD_EMBEDDER names the provider
// when set (so a program may chat with one provider and embed with
// another); otherwise the first of providers whose embedder the
// environment configures is chosen. Config.Model is the embedding model
// (OPENAI_EMBEDDING_MODEL, OLLAMA_EMBEDDING_MODEL, GEMINI_EMBEDDING_MODEL;
// "" for the embedder's default), never the chat model's variable.
// Providers without an embedder (Anthropic, Bedrock) are passed by.
//
// When none is configured it returns a *failure.Error of kind
// failure.Config saying how to configure one.
func EmbedderConfigFromEnv(lookup func(string) (string, bool), providers ...Provider) (Config, error) {
	n := 0
	for _, p := range providers {
		if p.EmbedderEnv != nil && p.NewEmbedder != nil {
			n++
		}
	}
	if n == 0 {
		return Config{}, failure.New(failure.Config, failure.SourceModel,
			"no embedder provider is linked: pass the providers to choose from (provider.EmbedderFromEnv(openai.Provider(), ...))")
	}
	return choose(lookup, envEmbedder, "provider with an embedder", "embedder", providers,
		func(p Provider) (func(func(string) (string, bool)) (Config, bool), string) {
			if p.NewEmbedder == nil {
				return nil, ""
			}
			return p.EmbedderEnv, p.EmbedderHint
		})
}
