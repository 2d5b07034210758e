package toolsearch

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// corpusServer is one server of testdata's corpus: its tools/list answer
// (started locally from npm; see docs/context.md) and instructions.
type corpusServer struct {
	Instructions string `json:"instructions"`
	Tools        []struct {
		Name        string          `json:"name"`
		Title       string          `json:"title"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	} `json:"tools"`
}

type evalTask struct {
	Task string `json:"task"`
	Want string `json:"want"` // server/tool
}

// evalCorpus reads the corpus and tasks of agent/testdata/toolsearch.
func evalCorpus(t testing.TB) ([]Doc, []evalTask) {
	t.Helper()
	b, err := os.ReadFile("../../testdata/toolsearch/servers.json")
	if err != nil {
		t.Fatal(err)
	}
	var servers map[string]corpusServer
	if err := json.Unmarshal(b, &servers); err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(servers))
	for s := range servers {
		names = append(names, s)
	}
	slices.Sort(names)
	var docs []Doc
	for _, s := range names {
		for _, tl := range servers[s].Tools {
			docs = append(docs, Doc{Name: "mcp__" + s + "__" + tl.Name, Title: tl.Title, Description: tl.Description,
				Schema: tl.InputSchema, Server: s, Instructions: servers[s].Instructions})
		}
	}
	b, err = os.ReadFile("../../testdata/toolsearch/tasks.json")
	if err != nil {
		t.Fatal(err)
	}
	var tasks []evalTask
	if err := json.Unmarshal(b, &tasks); err != nil {
		t.Fatal(err)
	}
	return docs, tasks
}

type scores struct{ r1, r5, mrr float64 }

func (s scores) String() string {
	return fmt.Sprintf("recall@1 %.3f recall@5 %.3f MRR %.3f", s.r1, s.r5, s.mrr)
}

func evaluate(t testing.TB, docs []Doc, tasks []evalTask, search func(string, int) []Hit) scores {
	var s scores
	for _, tk := range tasks {
		want := "mcp__" + strings.Replace(tk.Want, "/", "__", 1)
		for rank, h := range search(tk.Task, 20) {
			if docs[h.Doc].Name == want {
				if rank == 0 {
					s.r1++
				}
				if rank < 5 {
					s.r5++
				}
				s.mrr += 1 / float64(rank+1)
				break
			}
		}
	}
	n := float64(len(tasks))
	return scores{s.r1 / n, s.r5 / n, s.mrr / n}
}

// TestEvaluation scores the ranking and plain BM25 on the corpus's tasks,
// on the whole set and on the held-out half (odd positions; the even half
// is the one to look at when changing the ranking), and fails when the
// ranking does worse than BM25.
func TestEvaluation(t *testing.T) {
	docs, tasks := evalCorpus(t)
	for _, tk := range tasks {
		want := "mcp__" + strings.Replace(tk.Want, "/", "__", 1)
		if !slices.ContainsFunc(docs, func(d Doc) bool { return d.Name == want }) {
			t.Fatalf("task %q wants %s, which is not in the corpus", tk.Task, want)
		}
	}
	var held []evalTask
	for i, tk := range tasks {
		if i%2 == 1 {
			held = append(held, tk)
		}
	}
	ix, base := New(docs), NewBM25(docs)
	for _, set := range []struct {
		name  string
		tasks []evalTask
	}{{"all", tasks}, {"held-out", held}} {
		got := evaluate(t, docs, set.tasks, ix.Search)
		bm := evaluate(t, docs, set.tasks, base.Search)
		t.Logf("%s (%d tasks, %d tools): ranking %v; BM25 %v", set.name, len(set.tasks), len(docs), got, bm)
		if got.mrr < bm.mrr || got.r5 < bm.r5 {
			t.Errorf("%s: ranking %v is worse than BM25 %v", set.name, got, bm)
		}
	}
	if testing.Verbose() {
		for _, tk := range tasks {
			hs := ix.Search(tk.Task, 3)
			var got []string
			for _, h := range hs {
				got = append(got, docs[h.Doc].Name)
			}
			want := "mcp__" + strings.Replace(tk.Want, "/", "__", 1)
			if len(got) == 0 || got[0] != want {
				t.Logf("miss %q want %s got %v", tk.Task, want, got)
			}
		}
	}
}

// BenchmarkSearchCorpus is the cost of a search over the corpus, with
// plain BM25 run in the same benchmark: "ratio" is the ranking's time per
// search over BM25's.
func BenchmarkSearchCorpus(b *testing.B) {
	docs, tasks := evalCorpus(b)
	for len(docs) < 500 {
		d := docs[len(docs)%238]
		d.Name += fmt.Sprintf("_%d", len(docs))
		docs = append(docs, d)
	}
	docs = docs[:500]
	ix, base := New(docs), NewBM25(docs)
	var ranking, bm time.Duration
	n := 0
	for b.Loop() {
		for _, tk := range tasks {
			t0 := time.Now()
			ix.Search(tk.Task, 5)
			t1 := time.Now()
			base.Search(tk.Task, 5)
			ranking, bm = ranking+t1.Sub(t0), bm+time.Since(t1)
			n++
		}
	}
	b.ReportMetric(float64(ranking.Nanoseconds())/float64(n), "ns/search")
	b.ReportMetric(float64(bm.Nanoseconds())/float64(n), "bm25-ns/search")
	b.ReportMetric(float64(ranking)/float64(bm), "ratio")
}
