package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
)

func TestDefaultClassifier(t *testing.T) {
	cases := []struct {
		spec agent.ToolSpec
		want agent.Permission
	}{
		{agent.ToolSpec{Name: "read_file"}, agent.Allow},
		{agent.ToolSpec{Name: "mcp__fs__list_directory", Source: agent.Provenance{Kind: "mcp", Name: "fs", Tool: "list_directory"}}, agent.Allow},
		{agent.ToolSpec{Name: "searchDocs"}, agent.Allow},
		{agent.ToolSpec{Name: "write_file"}, agent.Ask},
		{agent.ToolSpec{Name: "deleteRecord"}, agent.Ask},
		{agent.ToolSpec{Name: "run_shell_command"}, agent.Deny},
		{agent.ToolSpec{Name: "bash"}, agent.Deny},
		{agent.ToolSpec{Name: "read_then_exec"}, agent.Deny},
		{agent.ToolSpec{Name: "frobnicate"}, agent.Ask},
		{agent.ToolSpec{Name: "frobnicate", ReadOnly: true}, agent.Allow},
		{agent.ToolSpec{Name: "get_thing", Destructive: true}, agent.Ask},
		{agent.ToolSpec{Name: "get_thing", Executes: true}, agent.Deny},
	}
	for _, tc := range cases {
		if got := agent.DefaultClassifier(tc.spec); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.spec.Name, got, tc.want)
		}
	}
}

func TestPermissionRules(t *testing.T) {
	p := &agent.Permissions{Rules: []agent.Rule{
		{Tool: "mcp__files__*", Permission: agent.Allow},
		{Tool: "*delete*", Permission: agent.Deny},
		{Tool: "mcp__files__write*", Permission: agent.Ask},
	}}
	cases := []struct {
		name   string
		grants []string
		want   agent.Permission
	}{
		{"mcp__files__read", nil, agent.Allow},
		{"mcp__files__write_file", nil, agent.Ask},                         // ask beats allow
		{"mcp__files__write_file", []string{"mcp__files__*"}, agent.Allow}, // a grant turns ask into allow
		{"mcp__files__delete", []string{"*"}, agent.Deny},                  // never overrides deny
		{"run_shell", []string{"*"}, agent.Deny},                           // default deny is not granted away
		{"write_notes", []string{"write_*"}, agent.Allow},                  // default ask granted
	}
	for _, tc := range cases {
		if got := p.Decide(agent.ToolSpec{Name: tc.name}, tc.grants); got != tc.want {
			t.Errorf("%s with grants %v: %s, want %s", tc.name, tc.grants, got, tc.want)
		}
	}
}

// TestGrantFromTrustedCode: a toolset's code (not a tool's output) may
// pre-approve tools for the rest of the session, as skills' allowed-tools do.
func TestGrantFromTrustedCode(t *testing.T) {
	activate := tool("activate_skill", func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
		c, _ := agent.CallFromContext(ctx)
		c.Grant("write_*")
		return agent.TextResult("activated"), nil
	})
	model := llm.NewScripted(
		llm.Calls(llm.CallTool("1", "write_notes", nil)),
		llm.Calls(llm.CallTool("2", "activate_skill", nil)),
		llm.Calls(llm.CallTool("3", "write_notes", nil), llm.CallTool("4", "exec_cmd", nil)),
		llm.Say("done"))
	a := newAgent(t, agent.Config{Model: model, Permissions: &agent.Permissions{Rules: []agent.Rule{{Tool: "activate_skill", Permission: agent.Allow}}},
		Tools: []agent.Tool{activate, echoTool("write_notes", nil), echoTool("exec_cmd", nil)}})
	s := a.NewSession()
	if _, err := s.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	h := s.History()
	checkOneResultPerCall(t, h)
	if r := h[2].ToolResults[0]; !r.IsError || !strings.Contains(r.Content, "needs approval") {
		t.Errorf("before the grant: %q", r.Content)
	}
	if r := h[6].ToolResults; r[0].IsError || r[1].IsError == false {
		t.Errorf("after the grant: write=%q exec=%q", r[0].Content, r[1].Content)
	}
}
