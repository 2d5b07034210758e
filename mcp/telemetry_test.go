package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// TestTraceContextInMeta: the stdio server (a child process) sees the
// execute_tool span's W3C trace context in params._meta; without tracing it
// sees none.
func TestTraceContextInMeta(t *testing.T) {
	m := newManager(t, quickConfig(testServer("s", "", nil)))
	for _, traced := range []bool{true, false} {
		t.Run(map[bool]string{true: "traced", false: "off"}[traced], func(t *testing.T) {
			tp, exp := testkit.Tracing(t)
			cfg := agent.Config{Toolsets: []agent.Toolset{m.Toolset()}, Permissions: agent.AllowAll(),
				Model: llm.NewScripted(llm.Calls(llm.CallTool("c1", "mcp__s__traceparent", nil)), llm.SummarizeResults("saw"))}
			if traced {
				cfg.Telemetry.TracerProvider = tp
			}
			a, err := agent.New(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			ans, err := a.Run(testkit.Ctx(t, 20*time.Second), "go")
			if err != nil {
				t.Fatal(err)
			}
			if !traced {
				if !strings.Contains(ans.Text, "traceparent= ") || len(exp.GetSpans()) != 0 {
					t.Fatalf("tracing off, yet the server saw %q (%d spans)", ans.Text, len(exp.GetSpans()))
				}
				return
			}
			var tool testkit.Span
			for _, s := range testkit.SpansFromStubs(exp.GetSpans(), "") {
				if s.Name == "execute_tool mcp__s__traceparent" {
					tool = s
				}
			}
			want := "traceparent=00-" + tool.TraceID + "-" + tool.SpanID + "-01"
			if tool.SpanID == "" || !strings.Contains(ans.Text, want) {
				t.Fatalf("the server saw %q, want %q", ans.Text, want)
			}
			if tool.Attrs["switchboard.tool.source"] != "mcp" || tool.Attrs["gen_ai.tool.type"] != "extension" {
				t.Errorf("execute_tool attributes %v", tool.Attrs)
			}
		})
	}
}

// TestRequestIDAndHeaders: the span of an MCP tool call records the
// JSON-RPC id the SDK wrote (jsonrpc.request.id) over every transport, and
// over HTTP the request also carries the W3C trace context as headers. The
// id is the one the server received (over HTTP, read from the body the
// server got).
func TestRequestIDAndHeaders(t *testing.T) {
	var mu sync.Mutex
	var headerTP, bodyID string
	srv := echoServer()
	h := gomcp.NewStreamableHTTPHandler(func(*http.Request) *gomcp.Server { return srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			var head struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(b, &head) == nil && head.Method == "tools/call" {
				mu.Lock()
				headerTP, bodyID = r.Header.Get("traceparent"), string(head.ID)
				mu.Unlock()
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		h.ServeHTTP(w, r)
	}))
	defer hs.Close()
	tests := []struct {
		name, tool string
		cfg        ServerConfig
	}{
		{"stdio", "mcp__s__traceparent", testServer("s", "", nil)},
		{"in-process", "mcp__e__echo", ServerConfig{Name: "e", Server: echoServer()}},
		{"http", "mcp__h__echo", ServerConfig{Name: "h", Type: "http", URL: hs.URL}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newManager(t, quickConfig(tt.cfg))
			tp, exp := testkit.Tracing(t)
			a, err := agent.New(context.Background(), agent.Config{Toolsets: []agent.Toolset{m.Toolset()}, Permissions: agent.AllowAll(),
				Telemetry: agent.Telemetry{TracerProvider: tp},
				Model:     llm.NewScripted(llm.Calls(llm.CallTool("c1", tt.tool, map[string]string{"text": "hi"})), llm.Say("done"))})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.Run(testkit.Ctx(t, 20*time.Second), "go"); err != nil {
				t.Fatal(err)
			}
			var tool testkit.Span
			for _, s := range testkit.SpansFromStubs(exp.GetSpans(), "") {
				if s.Name == "execute_tool "+tt.tool {
					tool = s
				}
			}
			id := tool.Attrs["jsonrpc.request.id"]
			if id == "" {
				t.Fatalf("execute_tool %s has no jsonrpc.request.id: %v", tt.tool, tool.Attrs)
			}
			if tt.name != "http" {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if want := "00-" + tool.TraceID + "-" + tool.SpanID + "-01"; headerTP != want {
				t.Errorf("traceparent header %q, want %q", headerTP, want)
			}
			if strings.Trim(bodyID, `"`) != id {
				t.Errorf("span says id %q, the server received %s", id, bodyID)
			}
		})
	}
}
