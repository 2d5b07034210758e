package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
)

// VectorKey names one tool's vector: a SHA-256 of the embedding model's
// name and the text embedded of the tool (its server and name as words,
// its title and its description), so a vector is found again whatever
// tool snapshot lists the tool, and never for another model, a changed
// title or description, or another way of making the text.
type VectorKey [sha256.Size]byte

// String is the key in lower-case hex (64 characters), the name a store
// keeps the vector under.
func (k VectorKey) String() string { return hex.EncodeToString(k[:]) }

// VectorStore keeps tools' vectors outside the process, so that the
// replicas of an agent, and its next start, embed each tool once: the
// search reads from it the vectors its memory lacks before calling the
// embedder, and writes to it those the embedder computed. It is a cache: a
// failure of either call is logged and the search goes on (embedding what
// it could not read). Set it as [Config.Vectors] or with
// [ToolIndex.WithVectorStore]; the JetStream one is bus/store.OpenVectors.
// Implementations are safe for concurrent use.
type VectorStore interface {
	// LoadVectors returns, for each key, the vector stored under it, or
	// nil when there is none.
	LoadVectors(ctx context.Context, keys []VectorKey) ([][]float32, error)
	// SaveVectors stores vecs[i] under keys[i].
	SaveVectors(ctx context.Context, keys []VectorKey, vecs [][]float32) error
}
