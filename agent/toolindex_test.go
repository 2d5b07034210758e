package agent_test

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
)

// corpusDefs are the tools of testdata/toolsearch/servers.json (19 MCP
// servers' tools/list answers), named as the mcp package names them.
func corpusDefs(t testing.TB) []llm.ToolDef {
	t.Helper()
	b, err := os.ReadFile("testdata/toolsearch/servers.json")
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
	var defs []llm.ToolDef
	for _, s := range names {
		for _, tl := range servers[s].Tools {
			defs = append(defs, llm.ToolDef{Name: "mcp__" + s + "__" + tl.Name, Description: tl.Description, Schema: tl.InputSchema})
		}
	}
	return defs
}

func TestToolIndex(t *testing.T) {
	ix := agent.NewToolIndex(corpusDefs(t))
	if ix.Len() != 238 {
		t.Fatalf("Len = %d, want 238", ix.Len())
	}
	for _, tc := range []struct{ query, want string }{
		{"open a pull request on GitHub for my fix", "mcp__github__create_pull_request"},
		{"scrape this page into markdown", "mcp__firecrawl__firecrawl_scrape"},
		{"put a thumbs up emoji on that Slack message", "mcp__slack__slack_add_reaction"},
	} {
		ms := ix.Search(tc.query, 5)
		if !slices.ContainsFunc(ms, func(m agent.ToolMatch) bool { return m.Name == tc.want }) {
			t.Errorf("Search(%q) = %v, want %s in the top 5", tc.query, ms, tc.want)
		}
		for _, m := range ms {
			if !strings.HasPrefix(m.Why, "matched ") || m.Score <= 0 {
				t.Errorf("Search(%q): match %+v has no reason or score", tc.query, m)
			}
		}
	}
	if got := ix.Server("postgres"); !slices.Equal(got, []string{"mcp__postgres__query"}) {
		t.Errorf("Server(postgres) = %v", got)
	}
	if got := ix.Server("nope"); len(got) != 0 {
		t.Errorf("Server(nope) = %v", got)
	}
	if got := ix.Search("zzqqxx", 5); len(got) != 0 {
		t.Errorf("nonsense query found %v", got)
	}
}

func ExampleToolIndex() {
	ix := agent.NewToolIndex([]llm.ToolDef{
		{Name: "mcp__github__create_pull_request", Description: "Create a new pull request in a GitHub repository"},
		{Name: "mcp__github__list_issues", Description: "List issues in a GitHub repository"},
		{Name: "mcp__slack__slack_post_message", Description: "Post a new message to a Slack channel"},
	})
	for _, m := range ix.Search("send a message to the team channel", 2) {
		fmt.Println(m.Name, "-", m.Why)
	}
	// Output:
	// mcp__slack__slack_post_message - matched channel, messag
}
