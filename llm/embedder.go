package llm

import "context"

// Embedder turns texts into vectors whose cosine similarity says how close
// their meanings are: the agent's tool search ranks tools by meaning with
// one (agent.Config.Embedder). Each provider package that serves
// embeddings has a NewEmbedder (openai.NewEmbedder, ollama.NewEmbedder,
// gemini.NewEmbedder).
//
//	emb, err := openai.NewEmbedder(provider.Config{APIKey: key})
//	vecs, err := emb.Embed(ctx, []string{"delete a file", "erase a file"})
type Embedder interface {
	// Name names the embedding model ("openai/text-embedding-3-small"):
	// vectors of different names are not comparable, so it is part of
	// every cache key of a vector.
	Name() string
	// Embed returns one vector per text, in order, all of the same
	// length. A failure is a *failure.Error of Source failure.SourceModel.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}
