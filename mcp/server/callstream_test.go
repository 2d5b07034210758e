package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/mcp/server"
)

// TestQuestionOnCallStream: a question asked for a call from a context
// that lost it (as an MCP server's elicitation arrives, on the manager's
// goroutines, naming the call's run) reaches the Streamable HTTP client on
// the call's own response stream, with or without the client's standalone
// GET stream. Sent to the GET stream, it failed with "stream not connected
// or already closed" for a client that opens none, and for the TypeScript
// client whenever the call came before its GET stream was up.
func TestQuestionOnCallStream(t *testing.T) {
	for _, tc := range []struct {
		name     string
		noGET    bool
		protocol string
	}{
		{"no GET stream", true, "2025-11-25"},
		{"no GET stream, 2025-06-18", true, "2025-06-18"},
		{"with the GET stream", false, "2025-11-25"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var srv *server.Server
			relayed := agent.NewFuncTool(agent.ToolSpec{Name: "relayed", ReadOnly: true},
				func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
					call, _ := agent.CallFromContext(ctx)
					// not ctx: the question comes from elsewhere, naming the run
					qctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					res, err := srv.Elicitor().Elicit(qctx, agent.Elicitation{Run: call.Run, Kind: agent.ElicitForm, Message: "name?",
						Schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
					if err != nil {
						return nil, err
					}
					return agent.TextResult(fmt.Sprintf("%s %v", res.Action, res.Content["name"])), nil
				})
			srv = newServer(t, server.Config{Toolsets: []agent.Toolset{agent.NewToolset("t", relayed)}})
			url := serveHTTP(t, srv, "") // a server each: a case failing opens no circuit for the next
			c := gomcp.NewClient(&gomcp.Implementation{Name: "asked", Version: "1"}, &gomcp.ClientOptions{
				ElicitationHandler: func(context.Context, *gomcp.ElicitRequest) (*gomcp.ElicitResult, error) {
					return &gomcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
				}})
			cs, err := c.Connect(testkit.Ctx(t, 10*time.Second), &gomcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: tc.noGET},
				&gomcp.ClientSessionOptions{ProtocolVersion: tc.protocol})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			for i := range 3 {
				if txt, isErr := callText(t, cs, "relayed", map[string]any{}); isErr || txt != "accept Ada" {
					t.Errorf("call %d: %q (error %v)", i, txt, isErr)
				}
			}
		})
	}
}
