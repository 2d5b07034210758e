package toolsearch

import (
	"math"
	"reflect"
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

// TestNumbers: a word is plural when it ends in s but not in ss, us or
// is and is longer than three letters, or is an acronym's plural; words
// split as Terms splits them.
func TestNumbers(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []numbered
	}{
		{"list_issues", []numbered{{"list", false}, {"issu", true}}},
		{"get_issue", []numbered{{"get", false}, {"issu", false}}},
		{"API-get-users", []numbered{{"get", false}, {"user", true}}}, // api is a stop word
		{"getThreadReplies", []numbered{{"get", false}, {"thread", false}, {"repli", true}, {"getthreadrepli", true}}},
		{"open PRs", []numbered{{"open", false}, {"pr", true}}},
		{"the status of the class and its analysis", []numbered{{"status", false}, {"class", false}, {"analysi", false}}},
		{"bus gas", []numbered{{"bus", false}, {"gas", false}}},
		{"", nil},
	} {
		if got := numbers(tc.text); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("numbers(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

// TestRerankNumbers: among a server's tools that match alike, the one
// whose name has the query's noun in the query's number comes first (the
// open issues: list_issues; issue 128: get_issue), and the server's best
// score stays.
func TestRerankNumbers(t *testing.T) {
	get := Doc{Name: "mcp__gh__get_issue", Server: "gh", Description: "Get an issue of a repository."}
	list := Doc{Name: "mcp__gh__list_issues", Server: "gh", Description: "List the issues of a repository."}
	off := defaults
	off.number = 0
	// Without the stage the two tie, and the first listed ranks first:
	// each order is tried.
	for _, docs := range [][]Doc{{get, list}, {list, get}} {
		for _, tc := range []struct {
			query string
			want  string
		}{
			{"the open issues of the repository", list.Name},
			{"issue 128 of the repository", get.Name},
		} {
			got := newIndex(docs, defaults).Search(tc.query, 2)
			base := newIndex(docs, off).Search(tc.query, 2)
			if len(got) != 2 || docs[got[0].Doc].Name != tc.want {
				t.Errorf("%q over %s, %s ranked %+v, want %s first", tc.query, docs[0].Name, docs[1].Name, got, tc.want)
				continue
			}
			if math.Abs(got[0].Score-base[0].Score) > 1e-9*base[0].Score {
				t.Errorf("%q: the server's best score %g, %g without the number stage", tc.query, got[0].Score, base[0].Score)
			}
		}
	}
}

// TestRerankNamesKeepsServers: on every task of the corpus, the name and
// number stages leave each server's best score, and the score of each
// tool without a server, as they were.
func TestRerankNamesKeepsServers(t *testing.T) {
	docs, set := evalCorpus(t)
	tasks := allTasks(set)
	for i := range docs[:20] {
		docs[i].Server = "" // some tools without a server
	}
	off := defaults
	off.nameRerank, off.number = 0, 0
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
