package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
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

// countingListener counts the writes to the connections it accepts.
type countingListener struct {
	net.Listener
	writes *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, l.writes}, nil
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// TestCallAnsweredInOneWrite: over stateful Streamable HTTP (where go-sdk
// writes a priming event before the call, then its response, then the
// end of the chunked body), a call answered at once costs one write to
// the connection, at every protocol revision the server speaks over HTTP.
func TestCallAnsweredInOneWrite(t *testing.T) {
	for _, protocol := range []string{"2025-11-25", "2025-06-18", "2025-03-26"} {
		t.Run(protocol, func(t *testing.T) {
			echo := agent.NewFuncTool(agent.ToolSpec{Name: "echo", ReadOnly: true},
				func(context.Context, json.RawMessage) (*agent.Result, error) { return agent.TextResult("hi"), nil })
			srv := newServer(t, server.Config{Toolsets: []agent.Toolset{agent.NewToolset("t", echo)}})
			var writes atomic.Int64
			hs := httptest.NewUnstartedServer(srv.Handler())
			hs.Listener = countingListener{hs.Listener, &writes}
			hs.Start()
			t.Cleanup(hs.Close)
			cs, err := gomcp.NewClient(&gomcp.Implementation{Name: "c", Version: "1"}, nil).Connect(testkit.Ctx(t, 10*time.Second),
				&gomcp.StreamableClientTransport{Endpoint: hs.URL, DisableStandaloneSSE: true}, &gomcp.ClientSessionOptions{ProtocolVersion: protocol})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			call := func() {
				res, err := cs.CallTool(testkit.Ctx(t, 10*time.Second), &gomcp.CallToolParams{Name: "echo", Arguments: map[string]any{}})
				if err != nil || res.IsError {
					t.Fatalf("call: %v %+v", err, res)
				}
			}
			call()
			before := writes.Load()
			const n = 20
			for range n {
				call()
			}
			if got := writes.Load() - before; got != n {
				t.Errorf("%d calls took %d writes to the connection, want %d", n, got, n)
			}
		})
	}
}

// TestHeldFlushesReachTheClient: while a call runs, its priming event
// reaches the client (within the hold, without any other event) and a
// progress notification reaches it at once; the result follows when the
// call ends.
func TestHeldFlushesReachTheClient(t *testing.T) {
	release := make(chan struct{})
	wait := agent.NewFuncTool(agent.ToolSpec{Name: "wait", ReadOnly: true},
		func(ctx context.Context, args json.RawMessage) (*agent.Result, error) {
			if bytes.Contains(args, []byte("progress")) {
				call, _ := agent.CallFromContext(ctx)
				call.ReportProgress(agent.Progress{Progress: 1, Total: 2, Message: "half way"})
			}
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return agent.TextResult("done"), nil
		})
	srv := newServer(t, server.Config{Toolsets: []agent.Toolset{agent.NewToolset("t", wait)}})
	url := serveHTTP(t, srv, "")
	post := func(session, body string) *http.Response {
		t.Helper()
		req, err := http.NewRequestWithContext(testkit.Ctx(t, 20*time.Second), http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	init := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	session := init.Header.Get("Mcp-Session-Id")
	_ = init.Body.Close()
	post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()

	for i, c := range []struct{ args, want string }{
		{`{}`, "event: prime"},
		{`{"progress":true}`, `"notifications/progress"`},
	} {
		resp := post(session, `{"jsonrpc":"2.0","id":`+string(rune('2'+i))+`,"method":"tools/call","params":{"name":"wait","arguments":`+c.args+`,"_meta":{"progressToken":"p"}}}`)
		lines := make(chan string)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				lines <- sc.Text()
			}
		}()
		seen := func(want string, within time.Duration) {
			t.Helper()
			deadline := time.After(within)
			for {
				select {
				case l, ok := <-lines:
					if !ok {
						t.Fatalf("the stream ended before %s", want)
					}
					if strings.Contains(l, want) {
						return
					}
				case <-deadline:
					t.Fatalf("no %s within %v while the call runs", want, within)
				}
			}
		}
		seen(c.want, 5*time.Second) // the hold is 10 ms; this allows for a loaded machine
		release <- struct{}{}
		seen(`"done"`, 5*time.Second)
		_ = resp.Body.Close()
		for range lines {
		}
	}
}

// TestOversizeBodyClosesTheConnection: a POST body over go-sdk's bound
// (4 MiB) is answered 413 and net/http closes the connection, as without
// the held flushes' writer.
func TestOversizeBodyClosesTheConnection(t *testing.T) {
	srv := newServer(t, server.Config{})
	url := serveHTTP(t, srv, "")
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"pad":"` + strings.Repeat("x", gomcp.DefaultMaxRequestBodyBytes) + `"}}`
	req, err := http.NewRequestWithContext(testkit.Ctx(t, 20*time.Second), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !resp.Close {
		t.Errorf("status %d, connection closed %v; want 413 and a closed connection", resp.StatusCode, resp.Close)
	}
}
