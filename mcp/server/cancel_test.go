package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/mcp/server"
)

// TestCancellation: a client that gives up a call cancels the tool's
// context (and so a run), at every revision, in memory and over
// Streamable HTTP, stateful and stateless: with notifications/cancelled,
// or over HTTP from 2026-07-28 by closing the call's response stream,
// which that revision makes the cancellation ("the server MUST treat a
// client disconnect as cancellation of that request"). Without go-sdk's
// PropagateRequestCancellation a stateless 2026-07-28 call ran on after
// its client left. The server goes on serving.
func TestCancellation(t *testing.T) {
	for _, tc := range []struct {
		protocol  string
		http      bool
		stateless bool
	}{
		{"", false, false}, // in memory; go-sdk's latest: 2026-07-28
		{"", true, false}, {"", true, true},
		{"2025-11-25", true, false}, {"2025-06-18", true, false},
	} {
		name := fmt.Sprintf("%s http=%v stateless=%v", tc.protocol, tc.http, tc.stateless)
		t.Run(name, func(t *testing.T) {
			started := make(chan struct{}, 1)
			stopped := make(chan error, 1)
			block := agent.NewFuncTool(agent.ToolSpec{Name: "block", ReadOnly: true},
				func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
					started <- struct{}{}
					select {
					case <-ctx.Done():
						stopped <- ctx.Err()
						return nil, ctx.Err()
					case <-time.After(20 * time.Second):
						stopped <- nil
						return agent.TextResult("ran to the end"), nil
					}
				})
			srv := newServer(t, server.Config{Stateless: tc.stateless, Toolsets: []agent.Toolset{agent.NewToolset("t", block)}})
			var cs *gomcp.ClientSession
			if tc.http {
				c := gomcp.NewClient(&gomcp.Implementation{Name: "leaver", Version: "1"}, nil)
				var err error
				cs, err = c.Connect(testkit.Ctx(t, 10*time.Second), &gomcp.StreamableClientTransport{Endpoint: serveHTTP(t, srv, "")},
					&gomcp.ClientSessionOptions{ProtocolVersion: tc.protocol})
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
			} else {
				cs = connectMemAt(t, srv, nil, tc.protocol)
			}
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &gomcp.CallToolParams{Name: "block", Arguments: map[string]any{}})
				errc <- err
			}()
			<-started
			cancel()
			if err := <-errc; !errors.Is(err, context.Canceled) {
				t.Errorf("the client's call: %v, want context.Canceled", err)
			}
			select {
			case err := <-stopped:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("the tool's context ended with %v, want context.Canceled", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the tool's context was not cancelled when its client gave the call up")
			}
			if _, err := cs.ListTools(testkit.Ctx(t, 5*time.Second), nil); err != nil {
				t.Errorf("the server stopped serving: %v", err)
			}
		})
	}
}
