package server_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/guard"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/mcp"
	"github.com/switchboard-dev/switchboard/mcp/server"
)

// redactGuard redacts the word "secret" (the guards are the agent's; this
// checks that serving the agent keeps them).
type redactGuard struct{}

func (redactGuard) Name() string { return "redact" }

func (redactGuard) Check(_ context.Context, c agent.GuardCheck) (agent.Verdict, error) {
	if strings.Contains(c.Text, "secret") {
		return agent.Rewrite(strings.ReplaceAll(c.Text, "secret", "[x]"), "redacted"), nil
	}
	return agent.Pass(), nil
}

// TestServedAgentKeepsGuards: an agent served over MCP runs its output
// guard: the MCP client gets the redacted answer.
func TestServedAgentKeepsGuards(t *testing.T) {
	a, err := agent.New(context.Background(), agent.Config{Name: "teller", Description: "tells",
		Model:  llm.NewScripted(llm.Say("the secret is 42")),
		Guards: []agent.GuardRule{{Guard: redactGuard{}, At: agent.GuardOutput}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, server.Config{Runners: []agent.Runner{a}})
	cs := connectMem(t, srv, nil)
	res, err := cs.CallTool(testkit.Ctx(t, 30*time.Second), &gomcp.CallToolParams{Name: "teller", Arguments: map[string]any{"input": "tell"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*gomcp.TextContent).Text; got != "the [x] is 42" {
		t.Errorf("answer over MCP %q, want the redacted one", got)
	}
}

// TestGatewayResultGuard: the server in front of server-everything (a real
// reference MCP server, over stdio) applies Config.Guards to every call:
// the PII guard redacts the email in echo's result, and a deny-list on
// calls refuses one before it reaches the server.
func TestGatewayResultGuard(t *testing.T) {
	ctx := testkit.Ctx(t, 90*time.Second)
	m, err := mcp.New(ctx, mcp.Config{Servers: []mcp.ServerConfig{everythingStdio(t, filepath.Join(t.TempDir(), "pid"))}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	deny, err := guard.NewDenyList(guard.DenyConfig{Words: []string{"rm -rf"}})
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, server.Config{Toolsets: []agent.Toolset{m.Toolset()}, Permissions: agent.AllowAll(),
		Guards: []agent.GuardRule{
			{Guard: guard.NewPII(guard.PIIConfig{}), At: agent.GuardToolResult},
			{Guard: deny, At: agent.GuardToolCall},
		}})
	cs := connectMem(t, srv, nil)
	txt, isErr := callText(t, cs, "mcp__everything__echo", map[string]any{"message": "write to ann@example.com"})
	if isErr || !strings.Contains(txt, "write to [REDACTED:email]") || strings.Contains(txt, "ann@") {
		t.Errorf("echo through the gateway: %q (error %v), want the email redacted", txt, isErr)
	}
	txt, isErr = callText(t, cs, "mcp__everything__echo", map[string]any{"message": "rm -rf /"})
	if !isErr || !strings.Contains(txt, "guardrail") {
		t.Errorf("a denied call: %q (error %v), want a guardrail error", txt, isErr)
	}
}
