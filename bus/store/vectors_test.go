package store_test

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"math"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/store"
	"github.com/switchboard-dev/switchboard/failure"
)

// wordEmbedder is a deterministic llm.Embedder (words hashed into 64
// dimensions) that counts the texts it is given.
type wordEmbedder struct{ texts atomic.Int64 }

func (e *wordEmbedder) Name() string { return "test/words" }

func (e *wordEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	e.texts.Add(int64(len(texts)))
	out := make([][]float32, len(texts))
	for i, s := range texts {
		v := make([]float32, 64)
		for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) }) {
			h := fnv.New32a()
			h.Write([]byte(w))
			v[h.Sum32()%64]++
		}
		out[i] = v
	}
	return out, nil
}

// vectorDefs are the first n tools of the tool-search corpus.
func vectorDefs(t *testing.T, n int) []agent.ToolSpec {
	b, err := os.ReadFile("../../agent/testdata/toolsearch/servers.json")
	if err != nil {
		t.Fatal(err)
	}
	var servers map[string]struct {
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(b, &servers); err != nil {
		t.Fatal(err)
	}
	var names []string
	for s := range servers {
		names = append(names, s)
	}
	slices.Sort(names)
	var defs []agent.ToolSpec
	for _, s := range names {
		for _, tl := range servers[s].Tools {
			defs = append(defs, agent.ToolSpec{Name: "mcp__" + s + "__" + tl.Name, Description: tl.Description, InputSchema: tl.InputSchema})
		}
	}
	return defs[:n]
}

func matchNames(ms []agent.ToolMatch) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Name)
	}
	return out
}

// TestVectorsSharedAndDurable: the vectors one process embedded are read
// by a replica connected to the same server, and by a process started
// after the server restarted on its directory: neither calls the embedder
// for a tool, only for its query, and both rank as the first did.
func TestVectorsSharedAndDurable(t *testing.T) {
	dir := t.TempDir()
	ctx := ctxT(t, 60*time.Second)
	defs := vectorDefs(t, 40)
	const query = "create a pull request on a repository"
	search := func(b *bus.Bus) ([]string, int64) {
		t.Helper()
		s, err := store.OpenVectors(ctx, b, store.VectorsConfig{})
		if err != nil {
			t.Fatal(err)
		}
		e := &wordEmbedder{}
		ms := agent.NewToolIndex(defs, nil).WithEmbedder(e, nil).WithVectorStore(s).SearchContext(ctx, query, 5)
		return matchNames(ms), e.texts.Load()
	}
	server, err := bus.New(ctx, bus.Config{StoreDir: dir, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	want, n := search(server)
	if n != int64(len(defs))+1 || len(want) == 0 {
		t.Fatalf("the first process embedded %d texts (found %v), want %d tools and the query", n, want, len(defs)+1)
	}
	replica, err := bus.New(ctx, bus.Config{URLs: []string{server.ClientURL()}})
	if err != nil {
		t.Fatal(err)
	}
	got, n := search(replica)
	if n != 1 || !slices.Equal(got, want) {
		t.Errorf("the replica embedded %d texts and found %v, want the query alone and %v", n, got, want)
	}
	if err := replica.Close(); err != nil {
		t.Fatal(err)
	}
	if err := server.Close(); err != nil {
		t.Fatal(err)
	}
	restarted, err := bus.New(ctx, bus.Config{StoreDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer restarted.Close()
	got, n = search(restarted)
	if n != 1 || !slices.Equal(got, want) {
		t.Errorf("after a restart: embedded %d texts and found %v, want the query alone and %v", n, got, want)
	}
}

// TestVectorsStore: what is saved is loaded bit for bit, a key never
// saved is nil, and a bad call is refused with what was wrong.
func TestVectorsStore(t *testing.T) {
	b := newBus(t, bus.Config{})
	ctx := ctxT(t, 30*time.Second)
	s, err := store.OpenVectors(ctx, b, store.VectorsConfig{Name: "vec-test", Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	keys := []agent.VectorKey{{1}, {2}, {3}}
	vecs := [][]float32{{0.5, -1, 3e-8}, {1}, {math.MaxFloat32, 0}}
	if err := s.SaveVectors(ctx, keys, vecs); err != nil {
		t.Fatal(err)
	}
	got, err := s.LoadVectors(ctx, append(slices.Clone(keys), agent.VectorKey{9}))
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vecs {
		if !slices.Equal(got[i], v) {
			t.Errorf("vector %d = %v, want %v", i, got[i], v)
		}
	}
	if got[3] != nil {
		t.Errorf("a key never saved gave %v", got[3])
	}
	for _, tc := range []struct {
		name string
		keys []agent.VectorKey
		vecs [][]float32
	}{
		{"more keys than vectors", keys, vecs[:1]},
		{"an empty vector", keys[:1], [][]float32{{}}},
		{"a NaN", keys[:1], [][]float32{{float32(math.NaN())}}},
	} {
		if err := s.SaveVectors(ctx, tc.keys, tc.vecs); !errorsIs(err, failure.InvalidArgs) {
			t.Errorf("%s: %v, want InvalidArgs", tc.name, err)
		}
	}
	if _, err := store.OpenVectors(ctx, nil, store.VectorsConfig{}); !errorsIs(err, failure.Config) {
		t.Errorf("no bus: %v, want Config", err)
	}
}

// FuzzDecodeVector: any stored object decodes to a vector that encodes
// back to it, or is refused; never a panic.
func FuzzDecodeVector(f *testing.F) {
	good, _ := store.EncodeVector([]float32{1, -2.5, 0})
	f.Add(good)
	f.Add([]byte("SBV1"))
	f.Add([]byte("SBV1\xff\xff\xff\xff"))
	f.Add([]byte("SBV1\x01\x00\x00\x00\x00\x00\xc0\x7f")) // NaN
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := store.DecodeVector(data)
		if err != nil {
			return
		}
		back, err := store.EncodeVector(v)
		if err != nil || string(back) != string(data) {
			t.Fatalf("decoded %v from %x, which encodes to %x (%v)", v, data, back, err)
		}
	})
}
