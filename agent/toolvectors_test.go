package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode"

	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/openai"
)

// concepts are the meanings the fake embedder knows: the words of one
// group map to one dimension, as a real model puts synonyms close.
var concepts = [][]string{
	{"delete", "deletes", "erase", "remove", "removes", "wipe", "destroy", "purge"},
	{"sum", "add", "adds", "total", "tally", "plus"},
	{"number", "numbers", "figure", "figures", "digits"},
	{"entity", "entities", "node", "nodes", "thing", "things"},
}

const hashDims = 32

// conceptVector is the fake model: a bag of concepts, other words hashed
// into hashDims further dimensions.
func conceptVector(text string) []float32 {
	v := make([]float32, len(concepts)+hashDims)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) }) {
		dim := -1
		for i, c := range concepts {
			if slices.Contains(c, w) {
				dim = i
			}
		}
		if dim < 0 {
			h := fnv.New32a()
			h.Write([]byte(w))
			dim = len(concepts) + int(h.Sum32()%hashDims)
			v[dim] += 0.2
			continue
		}
		v[dim]++
	}
	return v
}

// conceptEmbedder is a deterministic llm.Embedder (our own interface)
// that counts the texts it embeds, or fails with err.
type conceptEmbedder struct {
	texts atomic.Int64
	calls atomic.Int64
	err   error
}

func (e *conceptEmbedder) Name() string { return "test/concepts" }

func (e *conceptEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	e.calls.Add(1)
	if e.err != nil {
		return nil, e.err
	}
	e.texts.Add(int64(len(texts)))
	out := make([][]float32, len(texts))
	for i, s := range texts {
		out[i] = conceptVector(s)
	}
	return out, nil
}

func names(ms []agent.ToolMatch) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Name)
	}
	return out
}

// TestToolIndexWithEmbedder: a query in other words than the tool's finds
// it through the embedder (not by words alone); each tool is embedded once,
// each query at each search.
func TestToolIndexWithEmbedder(t *testing.T) {
	defs := corpusTools(t)
	emb := &conceptEmbedder{}
	lex := agent.NewToolIndex(defs, nil)
	ix := lex.WithEmbedder(emb, nil)
	for _, tc := range []struct{ query, want string }{
		{"erase those things", "mcp__memory__delete_entities"},
	} {
		if got := names(lex.Search(tc.query, 5)); slices.Contains(got, tc.want) {
			t.Fatalf("words alone found %s for %q (%v): the case does not test meaning", tc.want, tc.query, got)
		}
		ms := ix.SearchContext(t.Context(), tc.query, 5)
		i := slices.IndexFunc(ms, func(m agent.ToolMatch) bool { return m.Name == tc.want })
		if i < 0 {
			t.Fatalf("SearchContext(%q) = %v, want %s in the top 5", tc.query, names(ms), tc.want)
		}
		t.Logf("%q: %v", tc.query, ms)
	}
	if n := emb.texts.Load(); n != int64(len(defs))+1 {
		t.Errorf("embedded %d texts, want %d tools and 1 query", n, len(defs)+1)
	}
	// Concurrent first searches of a fresh index embed the tools once.
	fresh := &conceptEmbedder{}
	ix2 := lex.WithEmbedder(fresh, nil)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { ix2.SearchContext(t.Context(), "erase those things", 5) })
	}
	wg.Wait()
	if n := fresh.texts.Load(); n != int64(len(defs))+4 {
		t.Errorf("4 concurrent searches embedded %d texts, want %d tools once and 4 queries", n, len(defs)+4)
	}
	ix.SearchContext(t.Context(), "add two numbers", 5)
	if n := emb.texts.Load(); n != int64(len(defs))+2 {
		t.Errorf("after a second search: embedded %d texts, want the tools once and 2 queries (%d)", n, len(defs)+2)
	}
	// Search is the lexical ranking, whatever the embedder.
	if !slices.Equal(names(ix.Search("open a pull request", 5)), names(lex.Search("open a pull request", 5))) {
		t.Error("Search differs from the lexical index's")
	}
}

// TestToolIndexEmbedderFails: a failing embedder leaves the search to the
// words, with a warning logged.
func TestToolIndexEmbedderFails(t *testing.T) {
	defs := corpusTools(t)
	var logs bytes.Buffer
	log := zerolog.New(&logs)
	emb := &conceptEmbedder{err: failure.New(failure.Transient, failure.SourceModel, "embeddings unavailable")}
	lex := agent.NewToolIndex(defs, nil)
	ix := lex.WithEmbedder(emb, &log)
	q := "open a pull request on GitHub"
	got, want := ix.SearchContext(t.Context(), q, 5), lex.Search(q, 5)
	if len(want) == 0 || !slices.Equal(names(got), names(want)) {
		t.Fatalf("SearchContext = %v, want the lexical %v", names(got), names(want))
	}
	if emb.calls.Load() == 0 || !strings.Contains(logs.String(), "tool search by meaning failed") ||
		!strings.Contains(logs.String(), "embeddings unavailable") {
		t.Errorf("calls %d, logs %q", emb.calls.Load(), logs.String())
	}
}

// mapVectors is an agent.VectorStore in memory that counts its calls, or
// fails with err.
type mapVectors struct {
	mu           sync.Mutex
	m            map[agent.VectorKey][]float32
	loads, saves int
	err          error
}

func (s *mapVectors) LoadVectors(_ context.Context, keys []agent.VectorKey) ([][]float32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loads++
	if s.err != nil {
		return nil, s.err
	}
	out := make([][]float32, len(keys))
	for i, k := range keys {
		out[i] = s.m[k]
	}
	return out, nil
}

func (s *mapVectors) SaveVectors(_ context.Context, keys []agent.VectorKey, vecs [][]float32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.saves++
	if s.err != nil {
		return s.err
	}
	if s.m == nil {
		s.m = map[agent.VectorKey][]float32{}
	}
	for i, k := range keys {
		s.m[k] = vecs[i]
	}
	return nil
}

// TestToolIndexVectorStore: the vectors one index embedded are read from
// the store by another (a replica: its own memory, its own embedder),
// which embeds only its query; a failing store leaves the search to the
// embedder, with warnings logged.
func TestToolIndexVectorStore(t *testing.T) {
	defs := corpusTools(t)
	lex := agent.NewToolIndex(defs, nil)
	store := &mapVectors{}
	first := &conceptEmbedder{}
	q := "erase those things"
	want := names(lex.WithEmbedder(first, nil).WithVectorStore(store).SearchContext(t.Context(), q, 5))
	if n := first.texts.Load(); n != int64(len(defs))+1 {
		t.Fatalf("the first index embedded %d texts, want %d tools and its query", n, len(defs)+1)
	}
	if len(store.m) != len(defs) || store.saves != 1 {
		t.Fatalf("the store has %d vectors after %d saves, want %d after 1", len(store.m), store.saves, len(defs))
	}
	replica := &conceptEmbedder{}
	got := names(lex.WithVectorStore(store).WithEmbedder(replica, nil).SearchContext(t.Context(), q, 5))
	if n := replica.texts.Load(); n != 1 {
		t.Errorf("the replica embedded %d texts, want its query alone", n)
	}
	if !slices.Equal(got, want) || store.saves != 1 {
		t.Errorf("the replica found %v (saves %d), want %v (1)", got, store.saves, want)
	}
	// A changed definition is embedded (and saved); the others are read.
	changed := slices.Clone(defs)
	changed[0].Description += " (changed)"
	again := &conceptEmbedder{}
	agent.NewToolIndex(changed, nil).WithEmbedder(again, nil).WithVectorStore(store).SearchContext(t.Context(), q, 5)
	if n := again.texts.Load(); n != 2 || len(store.m) != len(defs)+1 {
		t.Errorf("with one changed tool: embedded %d texts, store has %d; want 2 and %d", n, len(store.m), len(defs)+1)
	}

	var logs bytes.Buffer
	log := zerolog.New(&logs)
	broken := &mapVectors{err: failure.New(failure.Transient, failure.SourceBus, "store unavailable")}
	emb := &conceptEmbedder{}
	got = names(lex.WithEmbedder(emb, &log).WithVectorStore(broken).SearchContext(t.Context(), q, 5))
	if !slices.Equal(got, want) || emb.texts.Load() != int64(len(defs))+1 {
		t.Errorf("with a failing store: %v after %d texts, want %v after %d", got, emb.texts.Load(), want, len(defs)+1)
	}
	if broken.loads != 1 || broken.saves != 1 || strings.Count(logs.String(), "store unavailable") != 2 {
		t.Errorf("failing store: %d loads, %d saves, logs %q", broken.loads, broken.saves, logs.String())
	}
}

// embeddingsServer is a local server speaking OpenAI's POST /v1/embeddings
// with conceptVector as its model; it counts the inputs it embedded.
func embeddingsServer(t *testing.T, inputs *atomic.Int64) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&req) != nil || len(req.Input) == 0 {
			http.Error(w, `{"error":{"message":"bad request","type":"invalid_request_error"}}`, http.StatusBadRequest)
			return
		}
		inputs.Add(int64(len(req.Input)))
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		out := struct {
			Object string `json:"object"`
			Model  string `json:"model"`
			Data   []item `json:"data"`
		}{Object: "list", Model: req.Model}
		for i := len(req.Input) - 1; i >= 0; i-- { // out of order, as the index allows
			out.Data = append(out.Data, item{Object: "embedding", Index: i, Embedding: conceptVector(req.Input[i])})
		}
		w.Header().Set("content-type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestAgentSearchByMeaning: an agent with Config.Embedder (the OpenAI
// embedder against a local wire server) finds a deferred tool the task
// names in other words, and calls it; the tools are embedded once across
// the agent's runs.
func TestAgentSearchByMeaning(t *testing.T) {
	var inputs atomic.Int64
	srv := embeddingsServer(t, &inputs)
	emb, err := openai.NewEmbedder(provider.Config{BaseURL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	const query = "tally these figures"
	for _, tc := range []struct {
		name     string
		embedder llm.Embedder
		wantSum  bool
	}{
		{"words alone", nil, false},
		{"with the embedder", emb, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := &sync.Map{}
			steps := append(testkit.SearchAndCall("c1", query, map[string]int{"a": 1, "b": 2}), llm.Say("done"))
			steps = append(steps, testkit.SearchAndCall("c2", "add two numbers", map[string]int{"a": 1, "b": 2})...)
			steps = append(steps, llm.Say("done"))
			a := newAgent(t, agent.Config{Model: llm.NewScripted(steps...), Toolsets: serverTools(t, 20, 20, calls),
				Context: agent.ContextConfig{Window: 200_000}, Embedder: tc.embedder})
			s := a.NewSession()
			if _, err := s.Run(testkit.Ctx(t, 10*time.Second), "add them"); err != nil {
				t.Fatal(err)
			}
			called := ""
			for _, m := range s.History() {
				for _, c := range m.ToolCalls {
					if c.ID == "c1" {
						called = c.Name
					}
				}
			}
			if got := strings.HasSuffix(called, "__get-sum"); got != tc.wantSum {
				t.Fatalf("the search for %q led to %q; want get-sum: %v", query, called, tc.wantSum)
			}
			if !tc.wantSum {
				return
			}
			first := inputs.Load()
			if first != 400+1 {
				t.Errorf("embedded %d inputs, want 400 tools and 1 query", first)
			}
			if _, err := a.NewSession().Run(testkit.Ctx(t, 10*time.Second), "again"); err != nil {
				t.Fatal(err)
			}
			if n := inputs.Load(); n != first+1 {
				t.Errorf("a second run's search embedded %d inputs, want its query alone", n-first)
			}
		})
	}
}
