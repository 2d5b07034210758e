package agent

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"sync"

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
	m  map[[sha256.Size]byte][]float32
}

// vectorKey is the cache key of def's vector under the model named model.
func vectorKey(model string, def llm.ToolDef) [sha256.Size]byte {
	h := sha256.New()
	for _, s := range []string{model, def.Name, def.Description, string(def.Schema)} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	var k [sha256.Size]byte
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

// vectors returns the vectors of defs, embedding (in one call) those not
// cached yet.
func (c *toolVectors) vectors(ctx context.Context, e llm.Embedder, defs []llm.ToolDef) ([][]float32, error) {
	out := make([][]float32, len(defs))
	keys := make([][sha256.Size]byte, len(defs))
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
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m)+len(missing) > maxCachedVectors {
		c.m = make(map[[sha256.Size]byte][]float32, len(missing))
	}
	for j, i := range missing {
		out[i] = vecs[j]
		c.m[keys[i]] = vecs[j]
	}
	return out, nil
}

// len is the number of cached vectors.
func (c *toolVectors) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}
