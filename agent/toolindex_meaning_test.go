package agent_test

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/openai"
)

var sweep = flag.Bool("sweep", false, "TestSearchByMeaningEvaluation: log the figures of each semantic weight on the dev tasks")

// meaningTask is one task of testdata/toolsearch/tasks.json: the tools
// right for it (Want, and Also where the task leaves the choice open).
type meaningTask struct {
	Task string   `json:"task"`
	Want string   `json:"want"`
	Also []string `json:"also"`
}

func (tk meaningTask) wants() []string {
	var out []string
	for _, w := range append([]string{tk.Want}, tk.Also...) {
		out = append(out, "mcp__"+strings.Replace(w, "/", "__", 1))
	}
	return out
}

// meaningScores are recall@1, recall@5 and MRR over a task set.
type meaningScores struct{ r1, r5, mrr float64 }

func (s meaningScores) String() string {
	return fmt.Sprintf("recall@1 %.3f recall@5 %.3f MRR %.3f", s.r1, s.r5, s.mrr)
}

func scoreSearch(tasks []meaningTask, search func(string) []agent.ToolMatch) meaningScores {
	var s meaningScores
	for _, tk := range tasks {
		r := slices.IndexFunc(search(tk.Task), func(m agent.ToolMatch) bool { return slices.Contains(tk.wants(), m.Name) })
		if r < 0 {
			continue
		}
		if r == 0 {
			s.r1++
		}
		if r < 5 {
			s.r5++
		}
		s.mrr += 1 / float64(r+1)
	}
	n := float64(len(tasks))
	return meaningScores{s.r1 / n, s.r5 / n, s.mrr / n}
}

// useEmbedder starts internal/npm/use-embeddings.mjs (a real embedding
// model, Universal Sentence Encoder lite, served offline over OpenAI's
// wire format) and returns its base URL; it skips without the npm peers.
func useEmbedder(t *testing.T) string {
	t.Helper()
	node := testkit.Node22(t)
	cmd := exec.Command(node, filepath.Join(filepath.Dir(testkit.NodeModules(t)), "use-embeddings.mjs"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	port := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if p, ok := strings.CutPrefix(sc.Text(), "LISTENING "); ok {
				port <- p
			}
		}
		close(port)
		_ = cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = stdin.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	select {
	case p, ok := <-port:
		if !ok {
			<-done
			t.Fatalf("use-embeddings.mjs exited: %s", stderr.String())
		}
		return "http://127.0.0.1:" + p
	case <-time.After(60 * time.Second):
		t.Fatalf("use-embeddings.mjs did not listen within 60 s: %s", stderr.String())
	}
	return ""
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
	b, err := os.ReadFile("testdata/toolsearch/tasks.json")
	if err != nil {
		t.Fatal(err)
	}
	var tasks []meaningTask
	if err := json.Unmarshal(b, &tasks); err != nil || len(tasks) == 0 {
		t.Fatalf("%d tasks: %v", len(tasks), err)
	}
	var dev, held []meaningTask
	for i, tk := range tasks {
		if i%2 == 0 {
			dev = append(dev, tk)
		} else {
			held = append(held, tk)
		}
	}
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
	search := func(w float64) func(string) []agent.ToolMatch {
		return func(q string) []agent.ToolMatch {
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
			return fused.SearchContext(ctx, q, 20)
		}
	}
	chosen := *agent.SemanticWeight
	if *sweep {
		for _, w := range []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8} {
			t.Logf("dev, semantic weight %.1f: %v", w, scoreSearch(dev, search(w)))
		}
	}
	for _, set := range []struct {
		name  string
		tasks []meaningTask
	}{{"dev", dev}, {"held-out", held}, {"all", tasks}} {
		lex := scoreSearch(set.tasks, func(q string) []agent.ToolMatch { return lexical.Search(q, 20) })
		got := scoreSearch(set.tasks, search(chosen))
		t.Logf("%-8s (%d tasks, %d tools): by words and meaning (weight %.1f) %v; by words %v", set.name, len(set.tasks), len(tools), chosen, got, lex)
		if set.name != "held-out" && (got.mrr < lex.mrr || got.r5 < lex.r5) {
			t.Errorf("%s: by words and meaning %v is worse than by words %v", set.name, got, lex)
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
