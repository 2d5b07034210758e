package agent_test

import (
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/internal/evalset"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/openai"
)

var sweep = flag.Bool("sweep", false, "TestSearchByMeaningEvaluation: log the figures of each semantic weight on the dev tasks")

// useEmbedder starts internal/npm/use-embeddings.mjs (a real embedding
// model, Universal Sentence Encoder lite, served offline over OpenAI's
// wire format) and returns an embedder of it and its base URL; it skips
// without the npm peers.
func useEmbedder(tb testing.TB) (llm.Embedder, string) {
	tb.Helper()
	cmd := exec.Command(testkit.Node22(tb), filepath.Join(filepath.Dir(testkit.NodeModules(tb)), "use-embeddings.mjs"))
	base := "http://127.0.0.1:" + testkit.StartListening(tb, cmd)
	e, err := openai.NewEmbedder(provider.Config{BaseURL: base + "/v1", Model: "universal-sentence-encoder-lite",
		Policy: failure.NewPolicy(failure.PolicyConfig{MaxAttempts: 1})})
	if err != nil {
		tb.Fatal(err)
	}
	return e, base
}

// embedded is what the embeddings server at base has received: requests
// and texts embedded.
func embedded(tb testing.TB, base string) (requests, texts int) {
	tb.Helper()
	resp, err := http.Get(base + "/count")
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	var count struct{ Requests, Texts int }
	if err := json.NewDecoder(resp.Body).Decode(&count); err != nil {
		tb.Fatal(err)
	}
	return count.Requests, count.Texts
}

// TestSearchByMeaningEvaluation scores search_tools with a real embedding
// model (Universal Sentence Encoder lite, run offline by
// internal/npm/use-embeddings.mjs behind openai.NewEmbedder) on the
// evaluation's corpus and tasks, against the lexical ranking alone, on
// the dev half (even positions: where the semantic weight was chosen,
// -args -sweep), the held-out half and all. It fails when the fused
// ranking finds fewer tasks' tools in its top 5 than the lexical one on
// dev or on all, or an MRR lower by more than one task's first place, and
// checks what the embeddings server received: each tool once, each query
// once.
func TestSearchByMeaningEvaluation(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real embedding model")
	}
	e, base := useEmbedder(t)
	tools, instructions := corpus(t)
	halves := evalSet(t).Halves()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	lexical := agent.NewToolIndex(tools, instructions)
	fused := lexical.WithEmbedder(e, nil)
	// Each search embeds its query; the first also embeds the tools.
	searches := 0
	var took time.Duration
	search := func(w float64) func(string) []string {
		return func(q string) []string {
			old := *agent.SemanticWeight
			*agent.SemanticWeight = w
			defer func() { *agent.SemanticWeight = old }()
			searches++
			t0 := time.Now()
			defer func() {
				if searches > 1 { // the first embeds the tools
					took += time.Since(t0)
				}
			}()
			return names(fused.SearchContext(ctx, q, 20))
		}
	}
	chosen := *agent.SemanticWeight
	if *sweep {
		for _, w := range []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8} {
			t.Logf("dev, semantic weight %.1f: %v", w, evalset.Score(halves[0].Tasks, search(w)))
		}
	}
	for _, set := range halves {
		lex := evalset.Score(set.Tasks, func(q string) []string { return names(lexical.Search(q, 20)) })
		got := evalset.Score(set.Tasks, search(chosen))
		t.Logf("%-8s (%d tasks, %d tools): by words and meaning (weight %.1f) %v; by words %v", set.Name, len(set.Tasks), len(tools), chosen, got, lex)
		// The fused ranking must find as many tasks' tools in its top 5 and
		// rank them as well, give or take one task's first place.
		if set.Name != "held-out" && (got.R5 < lex.R5 || got.MRR < lex.MRR-1/float64(len(set.Tasks))) {
			t.Errorf("%s: by words and meaning %v is worse than by words %v", set.Name, got, lex)
		}
	}
	t.Logf("a search by words and meaning took %.1f ms on average (the query's embedding call included)", float64(took.Microseconds())/1000/float64(searches-1))
	requests, texts := embedded(t, base)
	if want := len(tools) + searches; texts != want {
		t.Errorf("the server embedded %d texts in %d requests, want %d (%d tools once, %d queries)", texts, requests, want, len(tools), searches)
	}
}

// BenchmarkSearchByMeaning is the cost of a search by words and meaning
// with the real model (use-embeddings.mjs), the query's embedding call
// included, with the search by words alone of the same index in the same
// loop: "ratio" is the first's time per search over the second's. It
// checks that the server embedded each query once (and the tools once).
func BenchmarkSearchByMeaning(b *testing.B) {
	e, base := useEmbedder(b)
	tools, instructions := corpus(b)
	tasks := evalSet(b).Tasks
	lexical := agent.NewToolIndex(tools, instructions)
	fused := lexical.WithEmbedder(e, nil)
	ctx := b.Context()
	fused.SearchContext(ctx, tasks[0].Task, 5) // embeds the tools
	_, before := embedded(b, base)
	var meaning, words time.Duration
	n := 0
	for b.Loop() {
		for _, tk := range tasks {
			t0 := time.Now()
			fused.SearchContext(ctx, tk.Task, 5)
			t1 := time.Now()
			lexical.Search(tk.Task, 5)
			meaning, words = meaning+t1.Sub(t0), words+time.Since(t1)
			n++
		}
	}
	b.ReportMetric(float64(meaning.Nanoseconds())/float64(n), "ns/search")
	b.ReportMetric(float64(words.Nanoseconds())/float64(n), "words-ns/search")
	b.ReportMetric(float64(meaning)/float64(words), "ratio")
	if _, after := embedded(b, base); after-before != n {
		b.Errorf("the server embedded %d queries, want %d", after-before, n)
	}
}
