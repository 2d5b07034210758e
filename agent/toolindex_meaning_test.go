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
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/openai"
)

var sweep = flag.Bool("sweep", false, "TestSearchByMeaningEvaluation: log the figures of each semantic weight on the dev tasks")

// useEmbedder starts internal/npm/use-embeddings.mjs (a real embedding
// model, Universal Sentence Encoder lite, served offline over OpenAI's
// wire format) and returns its base URL; it skips without the npm peers.
func useEmbedder(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(testkit.Node22(t), filepath.Join(filepath.Dir(testkit.NodeModules(t)), "use-embeddings.mjs"))
	return "http://127.0.0.1:" + testkit.StartListening(t, cmd)
}

// TestSearchByMeaningEvaluation scores search_tools with a real embedding
// model (Universal Sentence Encoder lite, run offline by
// internal/npm/use-embeddings.mjs behind openai.NewEmbedder) on the
// evaluation's corpus and tasks, against the lexical ranking alone, on
// the dev half (even positions: where the semantic weight was chosen,
// -args -sweep), the held-out half and all. It fails when the fused
// ranking does worse than the lexical one on dev or on all, and checks
// what the embeddings server received: each tool once, each query once.
func TestSearchByMeaningEvaluation(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real embedding model")
	}
	base := useEmbedder(t)
	tools, instructions := corpus(t)
	halves := evalSet(t).Halves()
	e, err := openai.NewEmbedder(provider.Config{BaseURL: base + "/v1", Model: "universal-sentence-encoder-lite", Policy: failure.NewPolicy(failure.PolicyConfig{MaxAttempts: 1})})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	lexical := agent.NewToolIndex(tools, instructions)
	fused := lexical.WithEmbedder(e, nil)
	// Queries are embedded once: the sweep and the figures reuse them.
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
		if set.Name != "held-out" && (got.MRR < lex.MRR || got.R5 < lex.R5) {
			t.Errorf("%s: by words and meaning %v is worse than by words %v", set.Name, got, lex)
		}
	}
	t.Logf("a search by words and meaning took %.1f ms on average (the query's embedding call included)", float64(took.Microseconds())/1000/float64(searches-1))
	resp, err := http.Get(base + "/count")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var count struct{ Requests, Texts int }
	if err := json.NewDecoder(resp.Body).Decode(&count); err != nil {
		t.Fatal(err)
	}
	if want := len(tools) + searches; count.Texts != want {
		t.Errorf("the server embedded %d texts in %d requests, want %d (%d tools once, %d queries)", count.Texts, count.Requests, want, len(tools), searches)
	}
}
