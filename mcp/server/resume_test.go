package server_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/mcp/server"
)

// TestStreamResumption: a Streamable HTTP client whose call's response
// stream is cut mid-call (after a progress notification, before the
// result) reconnects with Last-Event-ID and gets the result, from a call
// that ran once; before 2026-07-28, which has no resumption. Without an
// event store the server sent no event ids, the client could not resume,
// and the call failed ("request terminated without response").
func TestStreamResumption(t *testing.T) {
	for _, protocol := range []string{"2025-11-25", "2025-06-18"} {
		t.Run(protocol, func(t *testing.T) {
			var runs atomic.Int32
			var c *testkit.CutProxy
			slow := agent.NewFuncTool(agent.ToolSpec{Name: "slow", ReadOnly: true},
				func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
					runs.Add(1)
					call, _ := agent.CallFromContext(ctx)
					call.ReportProgress(agent.Progress{Progress: 1, Total: 2, Message: "half way"})
					select { // the result comes after the cut
					case <-c.Cut:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
					return agent.TextResult("done"), nil
				})
			srv := newServer(t, server.Config{Toolsets: []agent.Toolset{agent.NewToolset("t", slow)}})
			c = testkit.NewCutProxy(t, serveHTTP(t, srv, ""), `"notifications/progress"`)

			var progress atomic.Int32
			cl := gomcp.NewClient(&gomcp.Implementation{Name: "resumer", Version: "1"}, &gomcp.ClientOptions{
				ProgressNotificationHandler: func(context.Context, *gomcp.ProgressNotificationClientRequest) { progress.Add(1) }})
			cs, err := cl.Connect(testkit.Ctx(t, 10*time.Second), &gomcp.StreamableClientTransport{Endpoint: c.URL, DisableStandaloneSSE: true},
				&gomcp.ClientSessionOptions{ProtocolVersion: protocol})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			params := &gomcp.CallToolParams{Name: "slow", Arguments: map[string]any{}}
			params.SetProgressToken("p1")
			res, err := cs.CallTool(testkit.Ctx(t, 20*time.Second), params)
			if err != nil {
				t.Fatalf("the call whose stream was cut failed: %v", err)
			}
			if txt := res.Content[0].(*gomcp.TextContent).Text; res.IsError || txt != "done" {
				t.Errorf("result %q (error %v), want done", txt, res.IsError)
			}
			select {
			case <-c.Cut:
			default:
				t.Fatal("the proxy never cut the stream: the test tested nothing")
			}
			if n := c.Resumes.Load(); n < 1 {
				t.Errorf("%d requests resumed a stream, want at least 1", n)
			}
			if n := runs.Load(); n != 1 {
				t.Errorf("the tool ran %d times, want 1", n)
			}
			if n := progress.Load(); n != 1 {
				t.Errorf("the client got %d progress notifications, want 1 (none replayed twice)", n)
			}
			// The session goes on: a second call takes an uncut stream.
			if txt, isErr := callText(t, cs, "slow", map[string]any{}); isErr || txt != "done" {
				t.Errorf("the next call: %q (error %v)", txt, isErr)
			}
		})
	}
}
