package agent

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// maxCachedVectors bounds a toolVectors cache; a full cache is emptied
// (the tools of the current snapshot are embedded again on their next
// search).
const maxCachedVectors = 1 << 14

// embedChunk bounds the texts of one Embed call.
const embedChunk = 1024

// toolVectors caches tools' vectors in memory, keyed by a hash of the
// embedding model's name and the tool's definition (name, description
// and schema): a tool is embedded once per model however many tool
// snapshots list it. It is safe for concurrent use.
type toolVectors struct {
	mu sync.Mutex
	m  map[VectorKey][]float32
}

// vectorKey is the cache key of def's vector under the model named model.
func vectorKey(model string, def llm.ToolDef) VectorKey {
	h := sha256.New()
	for _, s := range []string{model, def.Name, def.Description, string(def.Schema)} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	var k VectorKey
	h.Sum(k[:0])
	return k
}

// toolText is the text of a tool that is embedded.
func toolText(def llm.ToolDef) string {
	s := def.Name + "\n" + def.Description
	if len(def.Schema) > 0 {
		s += "\n" + string(def.Schema)
	}
	return clip(s, 8192)
}

// vectors returns the vectors of defs: from memory, else from store (nil:
// none), else embedded (in calls of at most embedChunk texts) and written
// to store. A store that fails is logged to log and passed by.
func (c *toolVectors) vectors(ctx context.Context, e llm.Embedder, store VectorStore, log zerolog.Logger, defs []llm.ToolDef) ([][]float32, error) {
	out := make([][]float32, len(defs))
	keys := make([]VectorKey, len(defs))
	var missing []int
	c.mu.Lock()
	for i, d := range defs {
		keys[i] = vectorKey(e.Name(), d)
		if v, ok := c.m[keys[i]]; ok {
			out[i] = v
		} else {
			missing = append(missing, i)
		}
	}
	c.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	if store != nil {
		missing = c.load(ctx, store, log, keys, missing, out)
		if len(missing) == 0 {
			return out, nil
		}
	}
	texts := make([]string, len(missing))
	for j, i := range missing {
		texts[j] = toolText(defs[i])
	}
	var vecs [][]float32
	for start := 0; start < len(texts); start += embedChunk {
		part := texts[start:min(start+embedChunk, len(texts))]
		v, err := e.Embed(ctx, part)
		if err != nil {
			return nil, err
		}
		if len(v) != len(part) {
			return nil, failure.New(failure.Protocol, failure.SourceModel,
				fmt.Sprintf("embedder %s returned %d vectors for %d texts", e.Name(), len(v), len(part)))
		}
		vecs = append(vecs, v...)
	}
	mk := make([]VectorKey, len(missing))
	for j, i := range missing {
		out[i] = vecs[j]
		mk[j] = keys[i]
	}
	c.remember(mk, vecs)
	if store != nil {
		if err := store.SaveVectors(ctx, mk, vecs); err != nil {
			log.Warn().Err(err).Int("vectors", len(mk)).Msg("tool vectors could not be saved to the vector store")
		}
	}
	return out, nil
}

// load fills out[i] for the missing indexes whose vectors store has, and
// returns the indexes still missing.
func (c *toolVectors) load(ctx context.Context, store VectorStore, log zerolog.Logger, keys []VectorKey, missing []int, out [][]float32) []int {
	mk := make([]VectorKey, len(missing))
	for j, i := range missing {
		mk[j] = keys[i]
	}
	got, err := store.LoadVectors(ctx, mk)
	if err == nil && len(got) != len(mk) {
		err = failure.New(failure.Protocol, failure.SourceAgent,
			fmt.Sprintf("the vector store returned %d vectors for %d keys", len(got), len(mk)))
	}
	if err != nil {
		log.Warn().Err(err).Int("vectors", len(mk)).Msg("tool vectors could not be read from the vector store; embedding them")
		return missing
	}
	var still []int
	var foundK []VectorKey
	var foundV [][]float32
	for j, i := range missing {
		if len(got[j]) == 0 {
			still = append(still, i)
			continue
		}
		out[i] = got[j]
		foundK, foundV = append(foundK, mk[j]), append(foundV, got[j])
	}
	c.remember(foundK, foundV)
	return still
}

// remember caches vecs[i] under keys[i].
func (c *toolVectors) remember(keys []VectorKey, vecs [][]float32) {
	if len(keys) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m)+len(keys) > maxCachedVectors {
		c.m = make(map[VectorKey][]float32, len(keys))
	}
	for j, k := range keys {
		c.m[k] = vecs[j]
	}
}

// len is the number of cached vectors.
func (c *toolVectors) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
