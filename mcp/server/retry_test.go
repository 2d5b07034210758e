package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
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
// its retry lands on the other, which hands it to the first (RetryOf,
// Server.Resume; here through a go-sdk middleware, as package gateway
// does over NATS): the call completes with the client's answer. Without
// the hand-over the retry is refused.
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
				replicas[i] = newServer(t, server.Config{Toolsets: []agent.Toolset{agent.NewToolset("t", ask)}, Stateless: true})
				if relay {
					replicas[i].MCP().AddReceivingMiddleware(handOver(i, &replicas, &relayed))
				}
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

// handOver is replica i's middleware: it names the replica in the
// requestStates it answers (r<i>.<state>) and hands a retry naming
// another replica to that replica's Resume.
func handOver(i int, replicas *[2]*server.Server, relayed *atomic.Int32) gomcp.Middleware {
	return func(next gomcp.MethodHandler) gomcp.MethodHandler {
		return func(ctx context.Context, method string, req gomcp.Request) (gomcp.Result, error) {
			ctr, ok := req.(*gomcp.CallToolRequest)
			if !ok {
				return next(ctx, method, req)
			}
			if r, ok := server.RetryOf(ctr); ok {
				var owner int
				if _, err := fmt.Sscanf(r.State, "r%d.", &owner); err == nil && owner >= 0 && owner < len(replicas) {
					_, r.State, _ = strings.Cut(r.State, ".")
					if owner != i {
						relayed.Add(1)
						return replicas[owner].Resume(ctx, r), nil
					}
					p := *ctr.Params
					p.RequestState = r.State
					ctr = &gomcp.CallToolRequest{Session: ctr.Session, Params: &p, Extra: ctr.Extra}
				}
			}
			res, err := next(ctx, method, ctr)
			if tr, ok := res.(*gomcp.CallToolResult); ok && tr.RequestState != "" {
				tr.RequestState = fmt.Sprintf("r%d.%s", i, tr.RequestState)
			}
			return res, err
		}
	}
}
