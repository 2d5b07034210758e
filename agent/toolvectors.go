package agent

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strings"
	"sync"
	"unicode"

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
// embedding model's name and the tool's embedded text (embedText: its
// name, title and description): a tool is embedded once per
// model however many tool snapshots list it. It is safe for concurrent
// use.
type toolVectors struct {
	mu sync.Mutex
	m  map[VectorKey][]float32
}

// vectorKey is the cache key of the vector of text under the model named
// model.
func vectorKey(model, text string) VectorKey {
	h := sha256.New()
	for _, s := range []string{model, text} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	var k VectorKey
	h.Sum(k[:0])
	return k
}

// embedText is the text of a tool that is embedded: its server and its
// name as words ("github: create issue" for mcp__github__create_issue),
// its title and its description, clipped to maxEmbedText bytes. Words
// rather than identifiers and no schema: a sentence encoder matches a
// query's words against words, and a schema's JSON adds noise to its
// vector (with the parameters' names added, the dev tasks' figures did
// not change by one task's worth: TestSearchByMeaningEvaluation).
func embedText(t ToolSpec, server string) string {
	name := t.Name
	if server != "" {
		name = strings.TrimPrefix(strings.TrimPrefix(name, "mcp__"), server+"__")
	}
	var b strings.Builder
	if server != "" {
		b.WriteString(server + ": ")
	}
	b.WriteString(identWords(name))
	if t.Title != "" {
		b.WriteString(". " + t.Title)
	}
	if t.Description != "" {
		b.WriteString(". " + t.Description)
	}
	return clip(b.String(), maxEmbedText)
}

// maxEmbedText bounds the embedded text of one tool.
const maxEmbedText = 4096

// identWords spells an identifier as words: create_issue, create-issue
// and createIssue are "create issue".
func identWords(id string) string {
	var b strings.Builder
	prev := rune(0)
	for _, r := range id {
		switch {
		case r == '_' || r == '-' || r == '.' || r == '/':
			r = ' '
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			b.WriteByte(' ')
		}
		if r == ' ' && prev == ' ' {
			continue
		}
		b.WriteRune(unicode.ToLower(r))
		prev = r
	}
	return strings.TrimSpace(b.String())
}

// vectors returns the vectors of texts: from memory, else from store (nil:
// none), else embedded (in calls of at most embedChunk texts) and written
// to store. A store that fails is logged to log and passed by.
func (c *toolVectors) vectors(ctx context.Context, e llm.Embedder, store VectorStore, log zerolog.Logger, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	keys := make([]VectorKey, len(texts))
	var missing []int
	c.mu.Lock()
	for i, text := range texts {
		keys[i] = vectorKey(e.Name(), text)
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
	todo := make([]string, len(missing))
	for j, i := range missing {
		todo[j] = texts[i]
	}
	var vecs [][]float32
	for start := 0; start < len(todo); start += embedChunk {
		part := todo[start:min(start+embedChunk, len(todo))]
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
