package toolsearch

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"testing"
	"time"
)

type refTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// referenceDocs are the tools of the reference servers (server-everything
// 2026.8.31 and go-sdk v1.8.0's memory and sequentialthinking examples, as
// their tools/list answered), named as the mcp package names them.
func referenceDocs(t testing.TB) []Doc {
	t.Helper()
	b, err := os.ReadFile("testdata/reference-tools.json")
	if err != nil {
		t.Fatal(err)
	}
	var servers map[string][]refTool
	if err := json.Unmarshal(b, &servers); err != nil {
		t.Fatal(err)
	}
	var names []string
	for s := range servers {
		names = append(names, s)
	}
	slices.Sort(names)
	var docs []Doc
	for _, s := range names {
		for _, tl := range servers[s] {
			docs = append(docs, Doc{Name: "mcp__" + s + "__" + tl.Name, Description: tl.Description, Schema: tl.InputSchema})
		}
	}
	return docs
}

// TestRankingReferenceCorpus: for queries a model would write, the tool a
// person would pick ranks first (and the others asked for in the top 3).
func TestRankingReferenceCorpus(t *testing.T) {
	docs := referenceDocs(t)
	if len(docs) != 28 {
		t.Fatalf("corpus has %d tools, want 28", len(docs))
	}
	ix := New(docs)
	for _, tc := range []struct {
		query string
		first string
		top3  []string
	}{
		{"add two numbers", "mcp__server-everything__get-sum", nil},
		{"sum of a and b", "mcp__server-everything__get-sum", nil},
		{"echo a message back", "mcp__server-everything__echo", nil},
		{"compress a file with gzip", "mcp__server-everything__gzip-file-as-resource", nil},
		{"environment variables", "mcp__server-everything__get-env", nil},
		{"long running operation with progress", "mcp__server-everything__trigger-long-running-operation", nil},
		{"ask the user a question elicitation", "mcp__server-everything__trigger-elicitation-request", nil},
		{"LLM sampling request", "mcp__server-everything__trigger-sampling-request", nil},
		{"client roots", "mcp__server-everything__get-roots-list", nil},
		{"research a topic", "mcp__server-everything__simulate-research-query", nil},
		{"image", "mcp__server-everything__get-tiny-image", nil},
		{"create entities in the knowledge graph", "mcp__go-sdk-memory__create_entities", nil},
		{"remember an observation about an entity", "mcp__go-sdk-memory__add_observations", nil},
		{"search nodes", "mcp__go-sdk-memory__search_nodes", nil},
		{"delete relations", "mcp__go-sdk-memory__delete_relations",
			[]string{"mcp__go-sdk-memory__delete_entities"}},
		{"start thinking about a complex problem step by step", "mcp__go-sdk-sequentialthinking__start_thinking", nil},
		{"revise a previous thought step", "mcp__go-sdk-sequentialthinking__continue_thinking", nil},
		// A parameter all three thinking tools take: any may come first.
		{"sessionId", "", []string{"mcp__go-sdk-sequentialthinking__continue_thinking",
			"mcp__go-sdk-sequentialthinking__review_thinking", "mcp__go-sdk-sequentialthinking__start_thinking"}},
		{"toggleSubscriberUpdates", "mcp__server-everything__toggle-subscriber-updates", nil},
	} {
		hits := ix.Search(tc.query, 3)
		var got []string
		for _, h := range hits {
			got = append(got, docs[h.Doc].Name)
		}
		if len(got) == 0 || (tc.first != "" && got[0] != tc.first) {
			t.Errorf("Search(%q) = %v, want %s first", tc.query, got, tc.first)
			continue
		}
		for _, w := range tc.top3 {
			if !slices.Contains(got, w) {
				t.Errorf("Search(%q) = %v, want %s in the top 3", tc.query, got, w)
			}
		}
	}
}

func TestSearchEdges(t *testing.T) {
	docs := referenceDocs(t)
	ix := New(docs)
	for _, tc := range []struct {
		query string
		k     int
		want  int
	}{
		{"", 5, 0},
		{"the of and", 5, 0},
		{"zzzunknownzzz", 5, 0},
		{"delete", 0, 0},
		{"delete", 2, 2},
		{"delete", 100, 3},
	} {
		if got := len(ix.Search(tc.query, tc.k)); got != tc.want {
			t.Errorf("Search(%q, %d) gave %d hits, want %d", tc.query, tc.k, got, tc.want)
		}
	}
	if hits := New(nil).Search("anything", 5); hits != nil {
		t.Errorf("empty index gave %v", hits)
	}
	// Stable: the same query gives the same order.
	a, b := ix.Search("request from the server", 10), ix.Search("request from the server", 10)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("unstable order: %v then %v", a, b)
	}
}

func TestTerms(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"mcp__files__read_file", []string{"file", "read", "file"}},
		{"getTinyImage", []string{"get", "tini", "imag", "gettinyimag"}},
		{"GitHub HubSpot", []string{"git", "hub", "github", "hub", "spot", "hubspot"}},
		{"Lists the roots", []string{"list", "root"}},
		{"access", []string{"access"}},
		{"list the URLs of open PRs", []string{"list", "url", "open", "pr"}},
		// A word whose stem is a stop word is one too.
		{"using the tools", nil},
		{"", nil},
	} {
		got := Terms(tc.in)
		if !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
			t.Errorf("Terms(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestEntities(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"go to example.com", []string{"url"}},
		{"fetch https://x.org/a", []string{"url"}},
		{"mail jane@example.com", []string{"email"}},
		{"rename old.txt to new.txt", []string{"file"}},
		{"open notes.md on example.io", []string{"url", "file"}},
		{"what is next.js", nil},
		{"no entity here", nil},
	} {
		if got := entities(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("entities(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestActionsAndAcronyms(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint8
	}{
		{"create_pull_request", actCreate},
		{"API-patch-page", actUpdate},
		{"remove all documents", actDelete},
		{"show me the commits", actRead},
		{"search_issues", actSearch},
		{"the channel history", 0},
	} {
		if got := actionsOf(Terms(tc.in)); got != tc.want {
			t.Errorf("actionsOf(%q) = %b, want %b", tc.in, got, tc.want)
		}
	}
	// A query's actions are its words as written: "edition" is no edit.
	for q, want := range map[string]uint8{"the Rust 2024 edition": 0, "created a page": actCreate,
		"dropping the index": actDelete, "show and delete": actRead | actDelete} {
		if got := queryActions(q); got != want {
			t.Errorf("queryActions(%q) = %b, want %b", q, got, want)
		}
	}
	if got := acronyms(Terms("merge_pull_request")); !slices.Equal(got, []string{"mp", "pr"}) {
		t.Errorf("acronyms = %q", got)
	}
	// A query's acronym finds the tool whose name spells it out.
	ix := New([]Doc{{Name: "merge_pull_request", Description: "Merge a pull request"},
		{Name: "create_merge_request", Description: "Create a merge request"}})
	if hits := ix.Search("merge the approved PR", 2); len(hits) == 0 || hits[0].Doc != 0 {
		t.Errorf("Search(merge the approved PR) = %+v, want merge_pull_request first", hits)
	}
}

// manyDocs is n tools: the reference corpus repeated under server names,
// as 20 servers of 20 tools would list them.
func manyDocs(t testing.TB, n int) []Doc {
	ref := referenceDocs(t)
	docs := make([]Doc, 0, n)
	for i := 0; len(docs) < n; i++ {
		d := ref[i%len(ref)]
		d.Name = fmt.Sprintf("mcp__server%02d__%s_%d", i/20, d.Name[len("mcp__"):], i)
		docs = append(docs, d)
	}
	return docs
}

// BenchmarkSearch400 is one search over 400 tools; it reports the share of
// the 1 ms a turn may spend on it.
func BenchmarkSearch400(b *testing.B) {
	ix := New(manyDocs(b, 400))
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		if len(ix.Search("create relations between entities in the knowledge graph", 5)) == 0 {
			b.Fatal("no hits")
		}
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N)/1e6, "ms/search")
}

func FuzzSearch(f *testing.F) {
	for _, s := range []string{"", "get sum", "mcp__x__y", "ÄÖÜ 工具", "\xff\xfe"} {
		f.Add(s, `{"type":"object","properties":{"a":{}}}`)
	}
	f.Fuzz(func(t *testing.T, q, schema string) {
		ix := New([]Doc{{Name: q, Description: q, Schema: json.RawMessage(schema)}, {Name: "other", Description: "x"}})
		for _, h := range ix.Search(q, 3) {
			if h.Doc < 0 || h.Doc > 1 || h.Score <= 0 {
				t.Fatalf("bad hit %+v", h)
			}
		}
	})
}
