package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/internal/evalset"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// corpusTools are the tools of testdata/toolsearch/servers.json (19 MCP
// servers' tools/list answers), named and sourced as the mcp package names
// them, with their titles.
func corpusTools(t testing.TB) []agent.ToolSpec {
	tools, _ := corpus(t)
	return tools
}

// corpus is corpusTools and the servers' instructions, by server name.
func corpus(t testing.TB) ([]agent.ToolSpec, map[string]string) {
	t.Helper()
	set := evalSet(t)
	var tools []agent.ToolSpec
	instructions := map[string]string{}
	for _, s := range set.Servers {
		if s.Instructions != "" {
			instructions[s.Name] = s.Instructions
		}
		for _, tl := range s.Tools {
			tools = append(tools, agent.ToolSpec{Name: evalset.ToolName(s.Name, tl.Name), Title: tl.Title, Description: tl.Description,
				InputSchema: tl.InputSchema, Source: agent.Provenance{Kind: failure.SourceMCP, Name: s.Name, Tool: tl.Name}})
		}
	}
	return tools, instructions
}

// evalSet is the tool search's evaluation set (testdata/toolsearch).
func evalSet(t testing.TB) *evalset.Set {
	t.Helper()
	set, err := evalset.Load("testdata/toolsearch")
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func TestToolIndex(t *testing.T) {
	ix := agent.NewToolIndex(corpus(t))
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

// A tool's title and its server's instructions are indexed too: here
// "team" is only in the slack server's instructions.
func ExampleToolIndex() {
	ix := agent.NewToolIndex([]agent.ToolSpec{
		{Name: "mcp__github__create_pull_request", Title: "Create Pull Request", Description: "Create a new pull request in a GitHub repository"},
		{Name: "mcp__github__list_issues", Title: "List Issues", Description: "List issues in a GitHub repository"},
		{Name: "mcp__slack__slack_post_message", Title: "Post Message", Description: "Post a new message to a Slack channel"},
	}, map[string]string{"slack": "The team's chat."})
	for _, m := range ix.Search("send a message to the team channel", 2) {
		fmt.Println(m.Name, "-", m.Why)
	}
	// Output:
	// mcp__slack__slack_post_message - matched channel, messag, team
}

// ledgerCorpus is the corpus and one server more, ledger, whose tools'
// names and descriptions say little: what op_17 does is in its title
// alone, and what the server is for in its instructions alone.
func ledgerCorpus(t testing.TB) ([]agent.ToolSpec, map[string]string) {
	tools, instructions := corpus(t)
	src := func(tool string) agent.Provenance {
		return agent.Provenance{Kind: failure.SourceMCP, Name: "ledger", Tool: tool}
	}
	tools = append(tools,
		agent.ToolSpec{Name: "mcp__ledger__op_17", Title: "Reconcile a bank statement", Description: "Runs operation 17.", Source: src("op_17")},
		agent.ToolSpec{Name: "mcp__ledger__op_18", Description: "Runs operation 18.", Source: src("op_18")})
	instructions["ledger"] = "Closes the books: month-end accruals and depreciation."
	return tools, instructions
}

// TestToolIndexTitleAndInstructions: a query whose words are only in a
// tool's title, or only in its server's instructions (indexed as the
// server's context, for all its tools), finds the tool through
// NewToolIndex and through the agent's search_tools, and does not once the
// title or the instructions are left out.
func TestToolIndexTitleAndInstructions(t *testing.T) {
	noTitle := func(tools []agent.ToolSpec, ins map[string]string) ([]agent.ToolSpec, map[string]string) {
		tools = slices.Clone(tools)
		for i := range tools {
			if tools[i].Name == "mcp__ledger__op_17" {
				tools[i].Title = ""
			}
		}
		return tools, ins
	}
	noInstructions := func(tools []agent.ToolSpec, _ map[string]string) ([]agent.ToolSpec, map[string]string) {
		return tools, nil
	}
	for _, tc := range []struct {
		name, query, want string
		without           func([]agent.ToolSpec, map[string]string) ([]agent.ToolSpec, map[string]string)
	}{
		{"title", "reconcile the bank statement", "mcp__ledger__op_17", noTitle},
		{"instructions", "book the month-end accruals", "mcp__ledger__op_18", noInstructions},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tools, ins := ledgerCorpus(t)
			if got := names(agent.NewToolIndex(tools, ins).Search(tc.query, 5)); !slices.Contains(got, tc.want) {
				t.Errorf("Search(%q) = %v, want %s in the top 5", tc.query, got, tc.want)
			}
			if got := searchTools(t, tools, ins, tc.query); !slices.Contains(got, tc.want) {
				t.Errorf("search_tools(%q) = %v, want %s", tc.query, got, tc.want)
			}
			tools, ins = tc.without(tools, ins)
			if got := names(agent.NewToolIndex(tools, ins).Search(tc.query, 5)); slices.Contains(got, tc.want) {
				t.Errorf("without the %s, Search(%q) = %v still has %s", tc.name, tc.query, got, tc.want)
			}
			if got := searchTools(t, tools, ins, tc.query); slices.Contains(got, tc.want) {
				t.Errorf("without the %s, search_tools(%q) = %v still has %s", tc.name, tc.query, got, tc.want)
			}
		})
	}
}

// instructedToolset is a toolset with the optional ServerInstructions
// method.
type instructedToolset struct {
	agent.Toolset
	ins map[string]string
}

func (s instructedToolset) ServerInstructions() map[string]string { return s.ins }

// searchTools is what an agent's search_tools call with query found
// (limit 5) among tools deferred behind it, their servers' instructions
// given by their toolset.
func searchTools(t *testing.T, specs []agent.ToolSpec, ins map[string]string, query string) []string {
	t.Helper()
	var tools []agent.Tool
	for _, s := range specs {
		tools = append(tools, agent.NewFuncTool(s, func(context.Context, json.RawMessage) (*agent.Result, error) {
			return agent.TextResult("ok"), nil
		}))
	}
	ts := instructedToolset{Toolset: agent.NewToolset("servers", tools...), ins: ins}
	model := llm.NewScripted(llm.Calls(llm.CallTool("c1", "search_tools", map[string]any{"query": query})), llm.Say("done"))
	a := newAgent(t, agent.Config{Model: model, Toolsets: []agent.Toolset{ts}, Context: agent.ContextConfig{Window: 200_000, DeferShare: 0.01}})
	s := a.NewSession()
	if _, err := s.Run(testkit.Ctx(t, 10*time.Second), "find a tool"); err != nil {
		t.Fatal(err)
	}
	res := lastResults(s.History())
	if len(res) != 1 || res[0].IsError {
		t.Fatalf("search_tools results: %+v", res)
	}
	c := res[0].Content
	var found struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if err := json.Unmarshal([]byte(c[strings.IndexByte(c, '\n')+1:strings.LastIndexByte(c, '\n')]), &found); err != nil {
		t.Fatalf("search_tools result %q: %v", c, err)
	}
	var out []string
	for _, f := range found.Tools {
		out = append(out, f.Name)
	}
	return out
}

// TestToolIndexServer: a server's tools are listed by its name (their
// provenance's) or by the server part of their names, which ToolName
// sanitised.
func TestToolIndexServer(t *testing.T) {
	name := agent.ToolName("mcp", "my.files", "read")
	ix := agent.NewToolIndex([]agent.ToolSpec{
		{Name: name, Description: "Read a file", Source: agent.Provenance{Kind: failure.SourceMCP, Name: "my.files", Tool: "read"}},
		{Name: "mcp__notes__list", Description: "List notes"},
		{Name: "local_tool", Description: "A Go tool"},
	}, nil)
	for _, tc := range []struct {
		server string
		want   []string
	}{
		{"my.files", []string{name}},
		{strings.Split(name, "__")[1], []string{name}},
		{"notes", []string{"mcp__notes__list"}},
		{"", nil},
		{"local_tool", nil},
	} {
		if got := ix.Server(tc.server); !slices.Equal(got, tc.want) {
			t.Errorf("Server(%q) = %v, want %v", tc.server, got, tc.want)
		}
	}
}
