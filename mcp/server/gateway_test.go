package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/mcp"
	"github.com/switchboard-dev/switchboard/mcp/server"
)

// localServer is an in-process go-sdk server behind the gateway.
func localServer() *gomcp.Server {
	s := gomcp.NewServer(&gomcp.Implementation{Name: "local", Version: "1"}, nil)
	gomcp.AddTool(s, &gomcp.Tool{Name: "echo", Description: "echoes"},
		func(_ context.Context, _ *gomcp.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (*gomcp.CallToolResult, any, error) {
			return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: "local:" + in.Text}}}, nil, nil
		})
	gomcp.AddTool(s, &gomcp.Tool{Name: "wipe", Description: "deletes everything"},
		func(context.Context, *gomcp.CallToolRequest, any) (*gomcp.CallToolResult, any, error) {
			return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: "wiped"}}}, nil, nil
		})
	return s
}

// serveHTTP serves srv's Handler at path on a test server and returns its
// URL; at cleanup (after the clients made later closed) the server's
// sessions end before the HTTP server closes.
func serveHTTP(t *testing.T, srv *server.Server, path string) string {
	t.Helper()
	var h http.Handler = srv.Handler()
	if path != "" {
		mux := http.NewServeMux()
		mux.Handle(path, h)
		h = mux
	}
	hs := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); hs.Close() })
	return hs.URL + path
}

// connect returns a go-sdk client session on srv over Streamable HTTP.
func connectHTTP(t *testing.T, url string, opts *gomcp.ClientOptions) *gomcp.ClientSession {
	t.Helper()
	c := gomcp.NewClient(&gomcp.Implementation{Name: "test-client", Version: "1"}, opts)
	cs, err := c.Connect(testkit.Ctx(t, 30*time.Second), &gomcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func toolNames(t *testing.T, cs *gomcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(testkit.Ctx(t, 10*time.Second), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

func callText(t *testing.T, cs *gomcp.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(testkit.Ctx(t, 30*time.Second), &gomcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*gomcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// everythingStdio is server-everything on stdio, started through sh so its
// pid lands in pidFile (to kill it).
func everythingStdio(t *testing.T, pidFile string) mcp.ServerConfig {
	nm := testkit.NodeModules(t)
	entry := filepath.Join(nm, "@modelcontextprotocol", "server-everything", "dist", "index.js")
	return mcp.ServerConfig{Name: "everything", Command: "sh",
		Args: []string{"-c", fmt.Sprintf("echo $$ > %q; exec node %q", pidFile, entry)}}
}

// TestGateway puts the server in front of server-everything (stdio) and
// an in-process go-sdk server through an mcp.Manager: the same
// mcp__server__tool names, the permission policy hiding and refusing, an
// audit record per call, and a downstream server that dies marked
// unavailable and reconnected while the endpoint stays up.
func TestGateway(t *testing.T) {
	ctx := testkit.Ctx(t, 90*time.Second)
	pidFile := filepath.Join(t.TempDir(), "pid")
	m, err := mcp.New(ctx, mcp.Config{Servers: []mcp.ServerConfig{everythingStdio(t, pidFile),
		{Name: "local", Server: localServer()}}, Policy: testkit.FastPolicy(failure.PolicyConfig{BreakerFailures: 1000}),
		RestartBackoff: 50 * time.Millisecond, MaxRestartBackoff: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var audit []server.AuditRecord
	srv, err := server.New(ctx, server.Config{Toolsets: []agent.Toolset{m.Toolset()},
		Permissions: &agent.Permissions{Rules: []agent.Rule{
			{Tool: "mcp__everything__get-env", Permission: agent.Deny},
			{Tool: "mcp__local__wipe", Permission: agent.Deny},
			{Tool: "mcp__*", Permission: agent.Allow}}},
		Audit: func(_ context.Context, r server.AuditRecord) { mu.Lock(); audit = append(audit, r); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	cs := connectHTTP(t, serveHTTP(t, srv, ""), nil)

	names := toolNames(t, cs)
	for _, want := range []string{"mcp__everything__echo", "mcp__local__echo"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}
	for _, denied := range []string{"mcp__everything__get-env", "mcp__local__wipe"} {
		if slices.Contains(names, denied) {
			t.Errorf("denied tool %s is listed", denied)
		}
		// Refused when called anyway: go-sdk answers an unlisted tool
		// with a JSON-RPC error.
		if _, err := cs.CallTool(ctx, &gomcp.CallToolParams{Name: denied, Arguments: map[string]any{}}); err == nil {
			t.Errorf("calling the denied tool %s succeeded", denied)
		}
	}
	if txt, isErr := callText(t, cs, "mcp__everything__echo", map[string]any{"message": "hi"}); isErr || !strings.Contains(txt, "hi") {
		t.Errorf("everything echo: %q (error %v)", txt, isErr)
	}
	if txt, isErr := callText(t, cs, "mcp__local__echo", map[string]any{"text": "x"}); isErr || txt != "local:x" {
		t.Errorf("local echo: %q (error %v)", txt, isErr)
	}

	// Kill server-everything: its calls fail with an error result, the
	// endpoint and the other server stay up, and it comes back.
	pid := readPid(t, pidFile)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	sawDown := false
	testkit.WaitFor(t, 60*time.Second, "server-everything to be reconnected", func() bool {
		txt, isErr := callText(t, cs, "mcp__everything__echo", map[string]any{"message": "again"})
		if isErr {
			sawDown = true
		} else if strings.Contains(txt, "again") && readPid(t, pidFile) != pid {
			return true
		}
		if txt, isErr := callText(t, cs, "mcp__local__echo", map[string]any{"text": "y"}); isErr || txt != "local:y" {
			t.Fatalf("the other server failed while everything was down: %q", txt)
		}
		return false
	})
	t.Logf("server-everything killed (pid %d): error results seen while down: %v; reconnected as pid %d", pid, sawDown, readPid(t, pidFile))

	mu.Lock()
	defer mu.Unlock()
	var ok, failed int
	for _, r := range audit {
		switch r.Outcome {
		case "ok":
			ok++
		case "failed", "tool_error":
			failed++
		}
		if r.Client == "" || r.Tool == "" {
			t.Errorf("audit record without client or tool: %+v", r)
		}
	}
	if ok < 3 {
		t.Errorf("audit: %d ok records, want at least 3 (%+v)", ok, audit)
	}
}

func readPid(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file %q: %v", b, err)
	}
	return pid
}

// TestHTTPProtection: DNS rebinding (a loopback request naming another
// host) and a cross-origin browser request are refused.
func TestHTTPProtection(t *testing.T) {
	url := serveHTTP(t, newReferenceServer(t), "/mcp")
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	cases := []struct {
		name   string
		host   string
		origin string
		want   int
	}{
		{"plain", "", "", http.StatusOK},
		{"rebinding host", "evil.example:80", "", http.StatusForbidden},
		{"cross origin", "", "https://evil.example", http.StatusForbidden},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", url, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if c.host != "" {
				req.Host = c.host
			}
			if c.origin != "" {
				req.Header.Set("Origin", c.origin)
				req.Header.Set("Sec-Fetch-Site", "cross-site")
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != c.want {
				t.Errorf("status %d, want %d", res.StatusCode, c.want)
			}
		})
	}
	http.DefaultClient.CloseIdleConnections()
}
