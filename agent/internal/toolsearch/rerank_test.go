package toolsearch

import (
	"math"
	"testing"
)

// TestRerankNames: within a server, the tool whose name has the query's
// words comes before a sibling whose description matches them more; the
// server's best score, and so its place among servers, stays.
func TestRerankNames(t *testing.T) {
	docs := []Doc{
		{Name: "mcp__crm__create_note", Server: "crm", Description: "Create a note on a contact of a company."},
		{Name: "mcp__crm__search_contacts", Server: "crm", Description: "Search by name or company."},
		{Name: "mcp__mail__send_email", Server: "mail", Description: "Send an email to a company."},
		{Name: "lookup", Description: "Look up a company."},
	}
	off := defaults
	off.nameRerank = 0
	for _, tc := range []struct {
		name  string
		p     params
		first int // of the crm tools
	}{
		{"without the name stage", off, 0},
		{"with it", defaults, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var crm []int
			for _, h := range newIndex(docs, tc.p).Search("contacts at a company", 4) {
				if h.Doc < 2 {
					crm = append(crm, h.Doc)
				}
			}
			if len(crm) != 2 || crm[0] != tc.first {
				t.Errorf("crm tools ranked %v, want %d first", crm, tc.first)
			}
		})
	}
}

// TestRerankNamesKeepsServers: on every task of the corpus, the name stage
// leaves each server's best score, and the score of each tool without a
// server, as they were.
func TestRerankNamesKeepsServers(t *testing.T) {
	docs, tasks := evalCorpus(t)
	for i := range docs[:20] {
		docs[i].Server = "" // some tools without a server
	}
	off := defaults
	off.nameRerank = 0
	with, without := newIndex(docs, defaults), newIndex(docs, off)
	best := func(hits []Hit) map[string]float64 {
		m := map[string]float64{}
		for _, h := range hits {
			s := docs[h.Doc].Server
			if s == "" {
				s = docs[h.Doc].Name
			}
			m[s] = max(m[s], h.Score)
		}
		return m
	}
	for _, tk := range tasks {
		a, b := best(with.Search(tk.Task, len(docs))), best(without.Search(tk.Task, len(docs)))
		if len(a) != len(b) {
			t.Fatalf("%q: %d servers matched, %d without the name stage", tk.Task, len(a), len(b))
		}
		for s, v := range b {
			if math.Abs(a[s]-v) > 1e-9*v {
				t.Errorf("%q: %s's best score %g, %g without the name stage", tk.Task, s, a[s], v)
			}
		}
	}
}
