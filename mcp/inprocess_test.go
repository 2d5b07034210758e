package mcp

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
)

// TestInProcessReconnect: an in-process server given NewTransport is
// reconnected when its session ends, like any other server; one given a
// single Transport is not; one given as a Server is, over a fresh pipe.
func TestInProcessReconnect(t *testing.T) {
	srv := goServer()
	var mu sync.Mutex
	var serverSide *gomcp.ServerSession
	var made atomic.Int32
	newT := func(ctx context.Context) (gomcp.Transport, error) {
		ct, st := gomcp.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			return nil, err
		}
		made.Add(1)
		mu.Lock()
		serverSide = ss
		mu.Unlock()
		return ct, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cases := []struct {
		name      string
		sc        ServerConfig
		reconnect bool
	}{
		{"NewTransport", ServerConfig{Name: "fresh", NewTransport: newT}, true},
		{"Transport", ServerConfig{Name: "once"}, false},
		{"Server", ServerConfig{Name: "server", Server: countingServer(&made)}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			made.Store(0)
			if !tc.reconnect {
				tr, err := newT(ctx)
				if err != nil {
					t.Fatal(err)
				}
				tc.sc.Transport = tr
			}
			m := newManager(t, quickConfig(tc.sc))
			args := []byte(`{"text":"hi"}`)
			if _, err := m.CallTool(ctx, tc.sc.Name, "echo", args); err != nil {
				t.Fatal(err)
			}
			if tc.sc.Server != nil {
				for ss := range tc.sc.Server.Sessions() { // the Manager's one
					_ = ss.Close()
				}
			} else {
				mu.Lock()
				_ = serverSide.Close() // the server ends the session
				mu.Unlock()
			}
			var err error
			if tc.reconnect {
				testkit.WaitFor(t, 20*time.Second, "a call on a new transport", func() bool {
					_, err = m.CallTool(ctx, tc.sc.Name, "echo", args)
					return err == nil && made.Load() >= 2
				})
				return
			}
			// A single-use transport: the calls fail from the end on.
			testkit.WaitFor(t, 20*time.Second, "a call to fail on the ended session", func() bool {
				_, err = m.CallTool(ctx, tc.sc.Name, "echo", args)
				return err != nil
			})
			if !errors.Is(err, failure.Unavailable) {
				t.Fatalf("a single-use transport: err = %v, want Unavailable", err)
			}
		})
	}
}

// countingServer is goServer counting in n the sessions its echo tool
// was called in.
func countingServer(n *atomic.Int32) *gomcp.Server {
	var seen sync.Map
	s := gomcp.NewServer(&gomcp.Implementation{Name: "go-test", Version: "1.0.0"}, nil)
	gomcp.AddTool(s, &gomcp.Tool{Name: "echo", Description: "Echo text."},
		func(ctx context.Context, req *gomcp.CallToolRequest, in echoArgs) (*gomcp.CallToolResult, any, error) {
			if _, old := seen.LoadOrStore(req.Session, true); !old {
				n.Add(1)
			}
			return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: in.Text}}}, nil, nil
		})
	return s
}

func TestInProcessConfig(t *testing.T) {
	ct, _ := gomcp.NewInMemoryTransports()
	newT := func(context.Context) (gomcp.Transport, error) { return ct, nil }
	for _, sc := range []ServerConfig{
		{Name: "none", Type: typeInProcess},
		{Name: "both", Transport: ct, NewTransport: newT},
		{Name: "server and transport", Server: goServer(), Transport: ct},
	} {
		if _, err := New(context.Background(), quickConfig(sc)); !errors.Is(err, failure.Config) {
			t.Errorf("%s: err = %v, want a Config failure", sc.Name, err)
		}
	}
}
