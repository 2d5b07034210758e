package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/mcp"
	"github.com/switchboard-dev/switchboard/mcp/server"
)

// managedServer is the in-process server behind the tests of calls to a
// Manager's tools on stdio. Its echo answers the progress token it was
// sent (the Manager's "sb-" tokens).
func managedServer(hanging, cancelled chan<- struct{}) *gomcp.Server {
	s := gomcp.NewServer(&gomcp.Implementation{Name: "fwd", Version: "1"}, nil)
	type text struct {
		Text string `json:"text"`
	}
	gomcp.AddTool(s, &gomcp.Tool{Name: "echo", Annotations: &gomcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *gomcp.CallToolRequest, in text) (*gomcp.CallToolResult, any, error) {
			return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{
				Text: fmt.Sprintf("echo:%s token:%v", in.Text, req.Params.GetProgressToken())}}}, nil, nil
		})
	gomcp.AddTool(s, &gomcp.Tool{Name: "steps"},
		func(ctx context.Context, req *gomcp.CallToolRequest, _ any) (*gomcp.CallToolResult, any, error) {
			for i := range 3 {
				_ = req.Session.NotifyProgress(ctx, &gomcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(),
					Progress: float64(i + 1), Total: 3, Message: fmt.Sprintf("step %d", i+1)})
			}
			return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: "stepped"}}}, nil, nil
		})
	gomcp.AddTool(s, &gomcp.Tool{Name: "fail"},
		func(context.Context, *gomcp.CallToolRequest, any) (*gomcp.CallToolResult, any, error) {
			return &gomcp.CallToolResult{IsError: true, Content: []gomcp.Content{&gomcp.TextContent{Text: "it broke"}}}, nil, nil
		})
	gomcp.AddTool(s, &gomcp.Tool{Name: "big"},
		func(context.Context, *gomcp.CallToolRequest, any) (*gomcp.CallToolResult, any, error) {
			return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: strings.Repeat("b", 100<<10)}}}, nil, nil
		})
	gomcp.AddTool(s, &gomcp.Tool{Name: "typed"},
		func(context.Context, *gomcp.CallToolRequest, any) (*gomcp.CallToolResult, struct {
			N int `json:"n"`
		}, error) {
			return nil, struct {
				N int `json:"n"`
			}{N: 7}, nil
		})
	gomcp.AddTool(s, &gomcp.Tool{Name: "wipe"},
		func(context.Context, *gomcp.CallToolRequest, any) (*gomcp.CallToolResult, any, error) {
			return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: "wiped"}}}, nil, nil
		})
	gomcp.AddTool(s, &gomcp.Tool{Name: "ask"},
		func(ctx context.Context, req *gomcp.CallToolRequest, _ any) (*gomcp.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &gomcp.ElicitParams{Message: "colour?",
				RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"c": {Type: "string"}}}})
			if err != nil {
				return nil, nil, err
			}
			return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: fmt.Sprintf("%s:%v", res.Action, res.Content["c"])}}}, nil, nil
		})
	gomcp.AddTool(s, &gomcp.Tool{Name: "hang"},
		func(ctx context.Context, _ *gomcp.CallToolRequest, _ any) (*gomcp.CallToolResult, any, error) {
			hanging <- struct{}{}
			<-ctx.Done()
			cancelled <- struct{}{}
			return nil, nil, ctx.Err()
		})
	return s
}

// managed is a Server on stdio pipes in front of managedServer through a
// Manager, and the audit records of its calls.
type managed struct {
	peer      *stdioPeer
	lines     chan string   // the server's output, line by line
	meta      string        // the _meta member each request carries (2026-07-28 on)
	hanging   chan struct{} // a hang call started at the server
	cancelled chan struct{}
	mu        sync.Mutex
	audit     []server.AuditRecord
}

func newManaged(t *testing.T, callTimeout time.Duration) *managed {
	return newManagedAt(t, callTimeout, "2025-11-25", `{}`, "2025-11-25")
}

// newManagedAt is newManaged with the client offering protocol and
// capabilities (JSON), and the Manager asking downstream for the revision
// down.
func newManagedAt(t *testing.T, callTimeout time.Duration, protocol, caps, down string) *managed {
	return newManagedWith(t, callTimeout, protocol, caps, down, nil)
}

// newManagedWith is newManagedAt with the served side's failure
// policy (nil: the default).
func newManagedWith(t *testing.T, callTimeout time.Duration, protocol, caps, down string, policy failure.Policy) *managed {
	ctx := testkit.Ctx(t, 60*time.Second)
	f := &managed{hanging: make(chan struct{}, 4), cancelled: make(chan struct{}, 4)}
	var late atomic.Pointer[server.Server] // the server's Elicitor, for the Manager made before it (as the gateway does)
	elicitor := agent.ElicitorFunc(func(ctx context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
		return late.Load().Elicitor().Elicit(ctx, e)
	})
	m, err := mcp.New(ctx, mcp.Config{Servers: []mcp.ServerConfig{{Name: "fwd", Server: managedServer(f.hanging, f.cancelled), ProtocolVersion: down}},
		Policy: testkit.FastPolicy(failure.PolicyConfig{}), Elicitor: elicitor})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	if err := m.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, server.Config{Toolsets: []agent.Toolset{m.Toolset()}, CallTimeout: callTimeout, Policy: policy,
		Permissions: &agent.Permissions{Rules: []agent.Rule{{Tool: "mcp__fwd__fail", Permission: agent.Allow},
			{Tool: "mcp__fwd__hang", Permission: agent.Allow}, {Tool: "mcp__fwd__steps", Permission: agent.Allow},
			{Tool: "mcp__fwd__big", Permission: agent.Allow}, {Tool: "mcp__fwd__ask", Permission: agent.Allow}, {Tool: "mcp__fwd__typed", Permission: agent.Allow}}},
		Audit: func(_ context.Context, rec server.AuditRecord) {
			f.mu.Lock()
			f.audit = append(f.audit, rec)
			f.mu.Unlock()
		}})
	late.Store(srv)
	f.peer = runOnPipes(t, srv, 0)
	if protocol >= "2026-07-28" {
		// The sessionless handshake: every request names the revision.
		f.meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + protocol + `","io.modelcontextprotocol/clientCapabilities":` +
			caps + `,"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}`
		f.peer.send(t, `{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{`+f.meta+`}}`)
		if line, err := f.peer.recv(t); err != nil || !strings.Contains(line, `"supportedVersions"`) {
			t.Fatalf("server/discover: %q %v", line, err)
		}
	} else {
		f.peer.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+protocol+`","capabilities":`+caps+`,"clientInfo":{"name":"raw","version":"1"}}}`)
		if line, err := f.peer.recv(t); err != nil || !strings.Contains(line, `"protocolVersion":"`+protocol+`"`) {
			t.Fatalf("initialize: %q %v", line, err)
		}
		f.peer.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	}
	f.readLines()
	return f
}

// readLines puts the server's output on f.lines, line by line, until it
// ends.
func (f *managed) readLines() {
	f.lines = make(chan string, 64)
	go func() {
		defer close(f.lines)
		for {
			l, err := f.peer.out.ReadString('\n')
			if err != nil {
				return
			}
			f.lines <- strings.TrimSpace(l)
		}
	}()
}

// recv is the next line the server wrote, waiting at most 10 s.
func (f *managed) recv(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-f.lines:
		if !ok {
			t.Fatal("the server closed its output")
		}
		return l
	case <-time.After(10 * time.Second):
		t.Fatal("no answer within 10 s")
		return ""
	}
}

// lastAudit waits for the audit record of the n-th call.
func (f *managed) lastAudit(t *testing.T, n int) server.AuditRecord {
	t.Helper()
	var rec server.AuditRecord
	testkit.WaitFor(t, 20*time.Second, fmt.Sprintf("the audit record of call %d", n), func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.audit) >= n {
			rec = f.audit[n-1]
			return true
		}
		return false
	})
	return rec
}

// TestStdioManagerCalls: on stdio, a call to a Manager's tool answers
// under the client's id (number or string), with the server's result, its
// progress under the client's token and in order before the result, tool
// errors as error results, results the Manager converts (structured
// content, saved big results) converted, refusals as go-sdk refuses them,
// and an audit record each.
func TestStdioManagerCalls(t *testing.T) {
	f := newManaged(t, 0)
	tests := []struct {
		name    string
		send    string
		want    []string // the lines answered, each holding its …-separated parts in order
		outcome string   // the call's audit record's ("": none)
	}{
		{"a numeric id", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp__fwd__echo","arguments":{"text":"x"}}}`,
			[]string{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"echo:x token:sb-`}, "ok"},
		{"a string id", `{"jsonrpc":"2.0","id":"abc","method":"tools/call","params":{"name":"mcp__fwd__echo","arguments":{"text":"y"}}}`,
			[]string{`"id":"abc","result":{"content":[{"type":"text","text":"echo:y token:sb-`}, "ok"},
		{"no arguments", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcp__fwd__echo"}}`,
			[]string{`"id":2,"result":{"content":[{"type":"text","text":"validating …"isError":true`}, "tool_error"},
		{"progress", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"mcp__fwd__steps","_meta":{"progressToken":"p-3"}}}`,
			[]string{
				`"method":"notifications/progress","params":{"progressToken":"p-3","message":"step 1","progress":1,"total":3}`,
				`"progressToken":"p-3","message":"step 2","progress":2`,
				`"progressToken":"p-3","message":"step 3","progress":3`,
				`"id":3,"result":{"content":[{"type":"text","text":"stepped"}]`}, "ok"},
		{"a tool error", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"mcp__fwd__fail","arguments":{}}}`,
			[]string{`"id":4,"result":{"content":[{"type":"text","text":"it broke"}],"isError":true`}, "tool_error"},
		{"structured content", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"mcp__fwd__typed","arguments":{}}}`,
			[]string{`"id":5,"result":{…"structuredContent":{"n":7}`}, "ok"},
		{"a big result is saved", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"mcp__fwd__big","arguments":{}}}`,
			[]string{`"id":6,"result":{…mcp_read_result`}, "ok"},
		// Calls go-sdk refuses.
		{"an unknown tool", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"mcp__fwd__nope","arguments":{}}}`,
			[]string{`"id":7,"error":{"code":-32602,"message":"unknown tool`}, ""},
		{"a tool to ask about, and a client that cannot be asked", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"mcp__fwd__wipe","arguments":{}}}`,
			[]string{`"id":9,"result":{"content":[{"type":"text","text":"permission denied: …"isError":true`}, "denied"},
		{"arguments that are not an object", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"mcp__fwd__echo","arguments":[1]}}`,
			[]string{`"id":8,`}, ""},
	}
	audited := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.peer.send(t, tt.send)
			for _, want := range tt.want {
				if line := f.recv(t); !inOrder(line, strings.Split(want, "…")) {
					t.Fatalf("got %q, want it to hold %q", line, want)
				}
			}
			if tt.outcome == "" {
				return
			}
			audited++
			rec := f.lastAudit(t, audited)
			if rec.Outcome != tt.outcome || rec.Client != "stdio" {
				t.Fatalf("audit %+v, want outcome %q from stdio", rec, tt.outcome)
			}
		})
	}
}

// inOrder reports whether s holds parts in order.
func inOrder(s string, parts []string) bool {
	for _, p := range parts {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return true
}

// TestStdioManagerCallEnds: a call the client cancels is cancelled at
// the server (go-sdk still answers it, with a cancelled error result, which
// the client ignores); one past the call timeout is
// cancelled at the server and answered with a timeout error. Both leave
// the session serving.
func TestStdioManagerCallEnds(t *testing.T) {
	f := newManaged(t, 300*time.Millisecond)
	f.peer.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp__fwd__hang","arguments":{}}}`)
	select {
	case <-f.hanging: // the call reached the server's tool: cancel it there
	case <-time.After(10 * time.Second):
		t.Fatal("the server's tool was not called")
	}
	f.peer.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"bored"}}`)
	select {
	case <-f.cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the server's tool was not cancelled")
	}
	if line := f.recv(t); !inOrder(line, []string{`"id":1,"result":`, "cancelled", `"isError":true`}) {
		t.Fatalf("got %q, want call 1 answered as cancelled", line)
	}
	f.peer.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcp__fwd__hang","arguments":{}}}`)
	line := f.recv(t)
	if !strings.Contains(line, `"id":2,"result":`) || !strings.Contains(line, `"isError":true`) ||
		!strings.Contains(line, "timed out") {
		t.Fatalf("after the cancelled call 1, got %q; want call 2's timeout", line)
	}
	select {
	case <-f.cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the server's tool was not cancelled at the timeout")
	}
	if rec := f.lastAudit(t, 2); rec.Outcome != "failed" {
		t.Fatalf("audit of the timed-out call: %+v", rec)
	}
	f.peer.send(t, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"mcp__fwd__echo","arguments":{"text":"z"}}}`)
	if line := f.recv(t); !strings.Contains(line, `"id":3,"result":{"content":[{"type":"text","text":"echo:z`) {
		t.Fatalf("the session does not serve after the calls ended: %q", line)
	}
}

// TestStdioManagerCallAsks: a server's question during a call
// (elicitation/create) reaches the client of the call, and its answer the
// server.
func TestStdioManagerCallAsks(t *testing.T) {
	f := newManagedAt(t, 0, "2025-11-25", `{"elicitation":{"form":{}}}`, "2025-11-25")
	f.peer.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp__fwd__ask","arguments":{}}}`)
	line := f.recv(t)
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Message string `json:"message"`
		} `json:"params"`
	}
	if err := json.Unmarshal([]byte(line), &req); err != nil || req.Method != "elicitation/create" || !strings.Contains(req.Params.Message, "colour?") {
		t.Fatalf("got %q, want the server's elicitation", line)
	}
	f.peer.send(t, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":{"action":"accept","content":{"c":"blue"}}}`)
	if line := f.recv(t); !inOrder(line, []string{`"id":1,"result":{"content":[{"type":"text","text":"accept:blue"}]`}) {
		t.Fatalf("got %q, want the call's result after the answer", line)
	}
}

// TestStdioManagerCallMRTR: on 2026-07-28 (multi round-trip requests) a
// call is answered with the server's result, and one whose server asks a
// question answers the client's request with the question (input-required) and
// ends with the result once the client retries with the answer.
func TestStdioManagerCallMRTR(t *testing.T) {
	f := newManagedAt(t, 0, "2026-07-28", `{"elicitation":{"form":{}}}`, "2025-11-25")
	f.peer.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+f.meta+`,"name":"mcp__fwd__echo","arguments":{"text":"x"}}}`)
	if line := f.recv(t); !inOrder(line, []string{`"id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"switchboard","version":"dev"}},"content":[{"type":"text","text":"echo:x token:sb-`, `"resultType":"complete"`}) {
		t.Fatalf("got %q, want the echo", line)
	}
	f.peer.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{`+f.meta+`,"name":"mcp__fwd__ask","arguments":{}}}`)
	var res struct {
		ID     int `json:"id"`
		Result struct {
			InputRequests map[string]struct {
				Method string `json:"method"`
			} `json:"inputRequests"`
			RequestState string `json:"requestState"`
		} `json:"result"`
	}
	line := f.recv(t)
	if err := json.Unmarshal([]byte(line), &res); err != nil || res.ID != 2 || res.Result.RequestState == "" || len(res.Result.InputRequests) != 1 {
		t.Fatalf("got %q, want an input-required result for call 2", line)
	}
	var key string
	for k := range res.Result.InputRequests {
		key = k
	}
	f.peer.send(t, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{`+f.meta+`,"name":"mcp__fwd__ask","requestState":"`+res.Result.RequestState+
		`","inputResponses":{"`+key+`":{"action":"accept","content":{"c":"green"}}}}}`)
	if line := f.recv(t); !strings.Contains(line, `"text":"accept:green"`) {
		t.Fatalf("got %q, want the call's result in answer to the retry", line)
	}
	if rec := f.lastAudit(t, 2); rec.Outcome != "ok" || rec.Tool != "mcp__fwd__ask" {
		t.Fatalf("audit of the asking call: %+v", rec)
	}
}

// TestStdioManagerCallsConcurrent: 1,000 calls sent at once on one stdio
// connection are each answered once, under its own id, with its own
// result.
func TestStdioManagerCallsConcurrent(t *testing.T) {
	f := newManaged(t, 0)
	const n = 1000
	go func() {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"mcp__fwd__echo","arguments":{"text":"n%d"}}}`+"\n", i, i)
		}
		_, _ = f.peer.in.WriteString(b.String())
	}()
	seen := map[int]bool{}
	for range n {
		var res struct {
			ID     int `json:"id"`
			Result struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"result"`
		}
		line := f.recv(t)
		if err := json.Unmarshal([]byte(line), &res); err != nil || len(res.Result.Content) != 1 {
			t.Fatalf("got %q", line)
		}
		if want := fmt.Sprintf("echo:n%d token:sb-", res.ID); !strings.HasPrefix(res.Result.Content[0].Text, want) || seen[res.ID] {
			t.Fatalf("call %d answered %q (seen before: %v), want %q…", res.ID, res.Result.Content[0].Text, seen[res.ID], want)
		}
		seen[res.ID] = true
	}
}

// faultServer is the mcp package's misbehaving stdio test server, pinned
// to 2025-11-25.
func faultServer(t *testing.T) mcp.ServerConfig {
	return mcp.ServerConfig{Name: "t", Command: testkit.GoBinary(t, "../internal/testserver"), ProtocolVersion: "2025-11-25"}
}

// TestStdioManagerCallFaults: a stdio server that crashes or writes
// garbage during a call fails the call as a typed failure (an error
// result naming it) at once, is restarted, and the next call to it
// succeeds.
func TestStdioManagerCallFaults(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	for _, tt := range []struct{ tool, args, want string }{
		{"crash", `{}`, "lost"},
		{"garbage", `{}`, "not a valid MCP message"},
		// A server that stops reading: the next call's 1 MiB of arguments
		// cannot be written, and the call ends at its 1 s timeout.
		{"deafen", `{"text":"` + big + `"}`, "timed out"},
	} {
		t.Run(tt.tool, func(t *testing.T) {
			ctx := testkit.Ctx(t, 60*time.Second)
			m, err := mcp.New(ctx, mcp.Config{Servers: []mcp.ServerConfig{faultServer(t)},
				Policy: testkit.FastPolicy(failure.PolicyConfig{BreakerFailures: 100}), RestartBackoff: 20 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = m.Close() })
			if err := m.WaitReady(ctx); err != nil {
				t.Fatal(err)
			}
			srv := newServer(t, server.Config{Toolsets: []agent.Toolset{m.Toolset()}, Permissions: agent.AllowAll(), CallTimeout: time.Second})
			f := &managed{peer: runOnPipes(t, srv, 0)}
			f.peer.handshake(t, "2025-11-25")
			f.readLines()
			tool := tt.tool
			if tt.tool == "deafen" {
				f.peer.send(t, `{"jsonrpc":"2.0","id":100,"method":"tools/call","params":{"name":"mcp__t__deafen","arguments":{}}}`)
				if line := f.recv(t); !strings.Contains(line, "no longer reading") {
					t.Fatalf("deafen: %q", line)
				}
				tool = "echo"
			}
			start := time.Now()
			f.peer.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mcp__t__`+tool+`","arguments":`+tt.args+`}}`)
			if line := f.recv(t); !inOrder(line, []string{`"id":1,"result":`, tt.want, `"isError":true`}) {
				t.Fatalf("got %q, want an error result naming %q", line, tt.want)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("the failure took %s", d)
			}
			i := 1
			testkit.WaitFor(t, 30*time.Second, "the server to come back", func() bool {
				i++
				f.peer.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"mcp__t__echo","arguments":{"text":"back"}}}`, i))
				return strings.Contains(f.recv(t), `"text":"back"`)
			})
		})
	}
}
