package toolsearch

import (
	"strings"
	"testing"
)

// FuzzIndex: any schema and text a server lists indexes and searches
// without a panic, and every term is lower case and non-empty.
func FuzzIndex(f *testing.F) {
	f.Add("GitHub createPullRequest", `{"type":"object","properties":{"state":{"enum":["open","closed"],"description":"PR state"}}}`, "open PRs")
	f.Add("", `[`, "")
	f.Add("HTTPServer v2", `{"properties":{"a":{"properties":{"b":{"items":{"properties":{"c":{}}}}}}}}`, "server ÄÖ")
	f.Fuzz(func(t *testing.T, text, schema, query string) {
		for _, term := range Terms(text) {
			if term == "" || strings.ToLower(term) != term {
				t.Fatalf("Terms(%q) has %q", text, term)
			}
		}
		ix := New([]Doc{{Name: text, Description: text, Schema: []byte(schema), Server: text}})
		for _, h := range ix.Search(query, 3) {
			if h.Score <= 0 {
				t.Fatalf("hit with score %v", h.Score)
			}
		}
	})
}
