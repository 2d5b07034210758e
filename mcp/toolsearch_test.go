package mcp

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// ledgerInstructions are ledgerServer's instructions.
const ledgerInstructions = "Closes the books: month-end accruals and depreciation."

// ledgerServer is an in-process server whose tools' names and
// descriptions say little: what they do is in their titles (MCP's title,
// else annotations.title) and what the server is for in its instructions.
func ledgerServer() *gomcp.Server {
	s := gomcp.NewServer(&gomcp.Implementation{Name: "ledger", Version: "1.0.0"}, &gomcp.ServerOptions{Instructions: ledgerInstructions})
	ok := func(context.Context, *gomcp.CallToolRequest, echoArgs) (*gomcp.CallToolResult, any, error) {
		return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: "ok"}}}, nil, nil
	}
	for _, tl := range []*gomcp.Tool{
		{Name: "op_17", Title: "Reconcile a bank statement", Description: "Runs operation 17.",
			Annotations: &gomcp.ToolAnnotations{Title: "Operation seventeen"}},
		{Name: "op_18", Description: "Runs operation 18.", Annotations: &gomcp.ToolAnnotations{Title: "Post a journal entry"}},
		{Name: "op_19", Description: "Runs operation 19."},
	} {
		gomcp.AddTool(s, tl, ok)
	}
	return s
}

// TestToolTitlesAndInstructions: the Manager's toolset gives each tool
// MCP's display name as its Title (title, else annotations.title) and the
// server's instructions; an agent's search_tools finds a tool by its
// title, and the server's tools by its instructions.
func TestToolTitlesAndInstructions(t *testing.T) {
	m := newManager(t, quickConfig(ServerConfig{Name: "ledger", Server: ledgerServer()}))
	ctx := testkit.Ctx(t, 30*time.Second)
	tools, err := m.Toolset().Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	titles := map[string]string{}
	for _, tl := range tools {
		titles[tl.Spec().Name] = tl.Spec().Title
	}
	for name, want := range map[string]string{
		"mcp__ledger__op_17": "Reconcile a bank statement",
		"mcp__ledger__op_18": "Post a journal entry",
		"mcp__ledger__op_19": "",
	} {
		if got, ok := titles[name]; !ok || got != want {
			t.Errorf("%s: Title %q (listed: %v), want %q", name, got, ok, want)
		}
	}
	if got := m.ServerInstructions("ledger"); got != ledgerInstructions {
		t.Errorf("ServerInstructions(ledger) = %q", got)
	}
	if got := m.ServerInstructions("nope"); got != "" {
		t.Errorf("ServerInstructions(nope) = %q", got)
	}
	si, ok := m.Toolset().(interface{ ServerInstructions() map[string]string })
	if !ok {
		t.Fatal("the toolset has no ServerInstructions method")
	}
	if got := si.ServerInstructions(); len(got) != 1 || got["ledger"] != ledgerInstructions {
		t.Errorf("toolset's ServerInstructions() = %v", got)
	}

	for _, tc := range []struct{ query, want string }{
		{"reconcile the bank statement", "mcp__ledger__op_17"},
		{"post a journal entry", "mcp__ledger__op_18"},
		{"book the month-end accruals", "mcp__ledger__op_19"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			model := llm.NewScripted(llm.Calls(llm.CallTool("c1", "search_tools", map[string]any{"query": tc.query})), llm.Say("done"))
			a, err := agent.New(ctx, agent.Config{Model: model, Toolsets: []agent.Toolset{m.Toolset()},
				Context: agent.ContextConfig{Window: 200_000, DeferShare: 0.0001}})
			if err != nil {
				t.Fatal(err)
			}
			s := a.NewSession()
			if _, err := s.Run(ctx, "find a tool"); err != nil {
				t.Fatal(err)
			}
			if got := searchFound(t, s.History()); !slices.Contains(got, tc.want) {
				t.Errorf("search_tools(%q) found %v, want %s", tc.query, got, tc.want)
			}
		})
	}
}

// searchFound are the tools the last search_tools result of hist names.
func searchFound(t *testing.T, hist []llm.Message) []string {
	t.Helper()
	for i := len(hist) - 1; i >= 0; i-- {
		for _, r := range hist[i].ToolResults {
			c := r.Content
			var found struct {
				Tools []struct{ Name string } `json:"tools"`
			}
			if r.IsError || json.Unmarshal([]byte(c[strings.IndexByte(c, '\n')+1:strings.LastIndexByte(c, '\n')]), &found) != nil {
				t.Fatalf("search_tools result %+v", r)
			}
			var out []string
			for _, f := range found.Tools {
				out = append(out, f.Name)
			}
			return out
		}
	}
	t.Fatal("no search_tools result")
	return nil
}
