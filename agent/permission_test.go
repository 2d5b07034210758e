package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

func TestDefaultClassifier(t *testing.T) {
	cases := []struct {
		spec agent.ToolSpec
		want agent.Permission
	}{
		{agent.ToolSpec{Name: "read_file"}, agent.Allow},
		{agent.ToolSpec{Name: "mcp__fs__list_directory", Source: agent.Provenance{Kind: failure.SourceMCP, Name: "fs", Tool: "list_directory"}}, agent.Allow},
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

// TestHintsFromServersCannotLowerDanger: the hints of a remote source (an
// MCP server's annotations, an A2A peer's) raise friction, but lower it
// only where the tool's name says nothing; hints set by Go code in this
// process are believed.
func TestHintsFromServersCannotLowerDanger(t *testing.T) {
	mcpTool := func(tool string) agent.ToolSpec {
		return agent.ToolSpec{Name: "mcp__srv__" + tool, Source: agent.Provenance{Kind: failure.SourceMCP, Name: "srv", Tool: tool}}
	}
	with := func(spec agent.ToolSpec, readOnly, destructive, executes bool) agent.ToolSpec {
		spec.ReadOnly, spec.Destructive, spec.Executes = readOnly, destructive, executes
		return spec
	}
	local := func(name string) agent.ToolSpec {
		return agent.ToolSpec{Name: name, Source: agent.Provenance{Kind: failure.SourceTool, Tool: name}}
	}
	cases := []struct {
		name string
		spec agent.ToolSpec
		want agent.Permission
	}{
		{"read-only hint on an executing name", with(mcpTool("run_shell_command"), true, false, false), agent.Deny},
		{"destructive hint on an executing name", with(mcpTool("run_shell_command"), false, true, false), agent.Deny},
		{"no hint on an executing name", mcpTool("run_shell_command"), agent.Deny},
		{"read-only hint on a writing name", with(mcpTool("write_file"), true, false, false), agent.Ask},
		{"read-only hint on a deleting name", with(mcpTool("deleteRecord"), true, false, false), agent.Ask},
		{"read-only hint on a reading name", with(mcpTool("read_file"), true, false, false), agent.Allow},
		{"read-only hint on a name that says nothing", with(mcpTool("frobnicate"), true, false, false), agent.Allow},
		{"no hint on a name that says nothing", mcpTool("frobnicate"), agent.Ask},
		{"destructive hint on a reading name", with(mcpTool("read_file"), false, true, false), agent.Ask},
		{"executes hint on a reading name", with(mcpTool("get_thing"), true, false, true), agent.Deny},
		{"A2A peer", with(agent.ToolSpec{Name: "a2a__peer__exec_task", Source: agent.Provenance{Kind: failure.SourceA2A, Name: "peer", Tool: "exec_task"}}, true, false, false), agent.Deny},
		{"no provenance", with(agent.ToolSpec{Name: "bash"}, true, false, false), agent.Deny},
		{"local tool: its hint is believed", with(local("run_shell_command"), true, false, false), agent.Allow},
		{"local tool: destructive", with(local("run_shell_command"), false, true, false), agent.Ask},
		{"agent as a tool", with(agent.ToolSpec{Name: "deployer", Source: agent.Provenance{Kind: failure.SourceAgent, Name: "deploy_bot", Tool: "deploy_bot"}}, true, false, false), agent.Allow},
		{"skill script", with(agent.ToolSpec{Name: "run_skill_script", Source: agent.Provenance{Kind: failure.SourceSkill, Name: "skills", Tool: "run_skill_script"}}, false, false, true), agent.Deny},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := agent.DefaultClassifier(tc.spec); got != tc.want {
				t.Errorf("DefaultClassifier(%+v) = %s, want %s", tc.spec, got, tc.want)
			}
			// Permissions.Decide, with no rule, agrees.
			if got := (&agent.Permissions{}).Decide(tc.spec, nil); got != tc.want {
				t.Errorf("Decide = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestReadOnlyHintDoesNotRunAShell: an MCP-like tool named
// run_shell_command with a read-only hint, under the default permissions,
// does not run.
func TestReadOnlyHintDoesNotRunAShell(t *testing.T) {
	ran := false
	shell := agent.NewFuncTool(agent.ToolSpec{Name: "mcp__box__run_shell_command", ReadOnly: true,
		Source: agent.Provenance{Kind: failure.SourceMCP, Name: "box", Tool: "run_shell_command"}},
		func(context.Context, json.RawMessage) (*agent.Result, error) {
			ran = true
			return agent.TextResult("ran"), nil
		})
	a := newAgent(t, agent.Config{Tools: []agent.Tool{shell}, Permissions: &agent.Permissions{},
		Model: llm.NewScripted(llm.Calls(llm.CallTool("1", "mcp__box__run_shell_command", map[string]any{"cmd": "id"})), llm.Say("done"))})
	s := a.NewSession()
	if _, err := s.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	if ran {
		t.Fatal("the tool ran under the default permissions")
	}
	if r := lastResults(s.History()); len(r) != 1 || !r[0].IsError || !strings.Contains(r[0].Content, "permission_denied") {
		t.Fatalf("results %+v", r)
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
