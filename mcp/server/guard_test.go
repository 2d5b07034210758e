package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
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
