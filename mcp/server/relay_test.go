package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/mcp/server"
)

// TestReplicasWithoutAffinity: two stateless replicas behind a round-robin
// balancer; a 2026-07-28 client's call asks a question on one replica and
// its retry lands on the other, which relays it to the first (Config.Relay,
// Server.ServeRetry): the call completes with the client's answer. Without
// the relay the retry is refused.
func TestReplicasWithoutAffinity(t *testing.T) {
	for _, relay := range []bool{true, false} {
		t.Run(fmt.Sprintf("relay=%v", relay), func(t *testing.T) {
			ask := agent.NewFuncTool(agent.ToolSpec{Name: "ask", ReadOnly: true},
				func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
					call, _ := agent.CallFromContext(ctx)
					res, err := call.Elicit(ctx, agent.Elicitation{Kind: agent.ElicitForm, Message: "name?",
						Schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
					if err != nil {
						return nil, err
					}
					return agent.TextResult(fmt.Sprintf("%s %v", res.Action, res.Content["name"])), nil
				})
			var replicas [2]*server.Server
			var relayed atomic.Int32
			for i := range replicas {
				cfg := server.Config{Toolsets: []agent.Toolset{agent.NewToolset("t", ask)}, Stateless: true,
					Replica: fmt.Sprintf("r%d", i)}
				if relay {
					cfg.Relay = func(ctx context.Context, replica string, retry []byte) ([]byte, error) {
						relayed.Add(1)
						for _, r := range replicas {
							if r.Replica() == replica {
								return r.ServeRetry(ctx, retry)
							}
						}
						return nil, fmt.Errorf("no replica %s", replica)
					}
				}
				replicas[i] = newServer(t, cfg)
			}
			handlers := []http.Handler{replicas[0].Handler(), replicas[1].Handler()}
			var next atomic.Int32
			lb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				handlers[next.Add(1)%2].ServeHTTP(w, r)
			}))
			t.Cleanup(func() { replicas[0].Close(); replicas[1].Close(); lb.Close() })
			c := gomcp.NewClient(&gomcp.Implementation{Name: "lb-client", Version: "1"}, &gomcp.ClientOptions{
				ElicitationHandler: func(context.Context, *gomcp.ElicitRequest) (*gomcp.ElicitResult, error) {
					return &gomcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "alice"}}, nil
				}})
			cs, err := c.Connect(testkit.Ctx(t, 10*time.Second), &gomcp.StreamableClientTransport{Endpoint: lb.URL}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			// Land the first tools/call on one replica, and so its retry
			// (the next request) on the other.
			next.Store(0)
			txt, isErr := callText(t, cs, "ask", map[string]any{})
			if relay {
				if isErr || txt != "accept alice" || relayed.Load() != 1 {
					t.Errorf("through the relay: %q (error %v), %d relayed", txt, isErr, relayed.Load())
				}
			} else if !isErr {
				t.Errorf("without a relay the retry on the other replica completed: %q", txt)
			}
		})
	}
}
