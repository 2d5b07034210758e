package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/mcp"
	"github.com/switchboard-dev/switchboard/mcp/server"
)

// uiExtension is the MCP Apps extension's identifier.
const uiExtension = "io.modelcontextprotocol/ui"

// appServer is a go-sdk server with what a gateway must pass on unchanged:
// the MCP Apps extension, a tool with a title, icons, annotations, an
// output schema and _meta naming its ui:// resource, a result with
// structuredContent and _meta, a resource, a template and a prompt.
func appServer() *gomcp.Server {
	s := gomcp.NewServer(&gomcp.Implementation{Name: "app", Version: "1"}, &gomcp.ServerOptions{
		Capabilities: &gomcp.ServerCapabilities{Extensions: map[string]any{
			uiExtension: map[string]any{"mimeTypes": []any{"text/html;profile=mcp-app"}}}}})
	ro := true
	s.AddTool(&gomcp.Tool{Name: "get-time", Title: "Get the time", Description: "the time",
		Icons:        []gomcp.Icon{{Source: "https://example.com/clock.png", MIMEType: "image/png"}},
		Annotations:  &gomcp.ToolAnnotations{ReadOnlyHint: ro, Title: "Clock"},
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"tz":{"type":"string"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"time":{"type":"string"}},"required":["time"]}`),
		Meta:         gomcp.Meta{"ui": map[string]any{"resourceUri": "ui://app/clock.html"}}},
		func(context.Context, *gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
			return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: "noon"}},
				StructuredContent: map[string]any{"time": "12:00"}, Meta: gomcp.Meta{"app/x": "y"}}, nil
		})
	s.AddResource(&gomcp.Resource{Name: "clock", URI: "ui://app/clock.html", MIMEType: "text/html;profile=mcp-app",
		Meta: gomcp.Meta{"ui": map[string]any{"prefersBorder": true}}},
		func(_ context.Context, req *gomcp.ReadResourceRequest) (*gomcp.ReadResourceResult, error) {
			return &gomcp.ReadResourceResult{Contents: []*gomcp.ResourceContents{{URI: req.Params.URI,
				MIMEType: "text/html;profile=mcp-app", Text: "<html>clock</html>"}}}, nil
		})
	s.AddResourceTemplate(&gomcp.ResourceTemplate{Name: "zone", URITemplate: "zone://{name}"},
		func(_ context.Context, req *gomcp.ReadResourceRequest) (*gomcp.ReadResourceResult, error) {
			return &gomcp.ReadResourceResult{Contents: []*gomcp.ResourceContents{{URI: req.Params.URI, Text: "zone " + req.Params.URI}}}, nil
		})
	s.AddPrompt(&gomcp.Prompt{Name: "ask-time", Title: "Ask"},
		func(context.Context, *gomcp.GetPromptRequest) (*gomcp.GetPromptResult, error) {
			return &gomcp.GetPromptResult{Messages: []*gomcp.PromptMessage{{Role: "user", Content: &gomcp.TextContent{Text: "what time?"}}}}, nil
		})
	return s
}

// frontedGateway serves a Server fronting servers over Streamable HTTP.
func frontedGateway(t *testing.T, prefix server.Prefix, servers ...mcp.ServerConfig) (*mcp.Manager, *gomcp.ClientSession) {
	t.Helper()
	ctx := testkit.Ctx(t, time.Minute)
	client := new(server.Client)
	m, err := mcp.New(ctx, mcp.Config{Servers: servers, Elicitor: client.Elicitor(), Sampler: client.Sampler(),
		OnLog: client.Log, OnResourceUpdated: client.ResourceUpdated})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	if err := m.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(ctx, server.Config{Servers: m, Prefix: prefix, Client: client, Permissions: agent.AllowAll()})
	if err != nil {
		t.Fatal(err)
	}
	return m, connectHTTP(t, serveHTTP(t, srv, "/mcp"), nil)
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFrontedPassesThrough checks that a fronted server's tools, results,
// resources, templates, prompts and extensions reach the client as the
// server sent them, under their own names with one server (PrefixAuto)
// and prefixed with two.
func TestFrontedPassesThrough(t *testing.T) {
	cases := []struct {
		name     string
		servers  []mcp.ServerConfig
		tool     string
		prompt   string
		resource string
	}{
		{"one server", []mcp.ServerConfig{{Name: "app", Server: appServer()}}, "get-time", "ask-time", "clock"},
		{"two servers", []mcp.ServerConfig{{Name: "app", Server: appServer()}, {Name: "other", Server: gomcp.NewServer(&gomcp.Implementation{Name: "o"}, nil)}},
			"mcp__app__get-time", "mcp__app__ask-time", "mcp__app__clock"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testkit.Ctx(t, time.Minute)
			_, cs := frontedGateway(t, server.PrefixAuto, tc.servers...)
			direct := appServer()
			if _, ok := cs.InitializeResult().Capabilities.Extensions[uiExtension]; !ok {
				t.Errorf("the gateway does not declare %s: %s", uiExtension, jsonOf(t, cs.InitializeResult().Capabilities))
			}
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(tools.Tools) != 1 {
				t.Fatalf("tools: %s", jsonOf(t, tools.Tools))
			}
			want := directTool(t, direct)
			want.Name = tc.tool
			if got := jsonOf(t, tools.Tools[0]); got != jsonOf(t, want) {
				t.Errorf("tool through the gateway:\n%s\nwant\n%s", got, jsonOf(t, want))
			}
			res, err := cs.CallTool(ctx, &gomcp.CallToolParams{Name: tc.tool, Arguments: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			// go-sdk's server adds its own serverInfo to _meta, as it does
			// for any server it serves.
			got := jsonOf(t, []any{res.Content, res.StructuredContent, res.Meta["app/x"], res.IsError})
			if want := `[[{"type":"text","text":"noon"}],{"time":"12:00"},"y",false]`; got != want {
				t.Errorf("result %s, want %s", jsonOf(t, res), want)
			}
			rl, err := cs.ListResources(ctx, nil)
			if err != nil || len(rl.Resources) != 1 || rl.Resources[0].Name != tc.resource || rl.Resources[0].URI != "ui://app/clock.html" {
				t.Fatalf("resources %s, %v", jsonOf(t, rl), err)
			}
			rd, err := cs.ReadResource(ctx, &gomcp.ReadResourceParams{URI: "ui://app/clock.html"})
			if err != nil || rd.Contents[0].Text != "<html>clock</html>" || rd.Contents[0].MIMEType != "text/html;profile=mcp-app" {
				t.Fatalf("read %s, %v", jsonOf(t, rd), err)
			}
			rz, err := cs.ReadResource(ctx, &gomcp.ReadResourceParams{URI: "zone://utc"})
			if err != nil || rz.Contents[0].Text != "zone zone://utc" {
				t.Fatalf("template read %s, %v", jsonOf(t, rz), err)
			}
			pr, err := cs.GetPrompt(ctx, &gomcp.GetPromptParams{Name: tc.prompt})
			if err != nil || jsonOf(t, pr.Messages) != `[{"content":{"type":"text","text":"what time?"},"role":"user"}]` {
				t.Fatalf("prompt %s, %v", jsonOf(t, pr), err)
			}
		})
	}
}

// directTool is appServer's tool as a client lists it directly.
func directTool(t *testing.T, s *gomcp.Server) *gomcp.Tool {
	t.Helper()
	ctx := testkit.Ctx(t, 30*time.Second)
	ct, st := gomcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := gomcp.NewClient(&gomcp.Implementation{Name: "direct"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	l, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	return l.Tools[0]
}

// TestMCPAppThroughGateway fronts the MCP App example server of the
// ext-apps SDK (npm @modelcontextprotocol/server-basic-vanillajs): its
// tool's _meta names a ui:// resource, which the client reads through the
// gateway as the server serves it.
func TestMCPAppThroughGateway(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a node process")
	}
	node := testkit.Node22(t)
	js := filepath.Join(testkit.NodeModules(t), "@modelcontextprotocol", "server-basic-vanillajs", "dist", "index.js")
	ctx := testkit.Ctx(t, time.Minute)
	m, cs := frontedGateway(t, server.PrefixAuto, mcp.ServerConfig{Name: "basic", Command: node, Args: []string{js, "--stdio"}})
	var directTools *gomcp.ListToolsResult
	var directRead *gomcp.ReadResourceResult
	const uri = "ui://get-time/mcp-app.html"
	err := m.WithSession(ctx, "basic", "direct", func(ctx context.Context, sess *gomcp.ClientSession) error {
		var err error
		if directTools, err = sess.ListTools(ctx, nil); err != nil {
			return err
		}
		directRead, err = sess.ReadResource(ctx, &gomcp.ReadResourceParams{URI: uri})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := jsonOf(t, tools.Tools), jsonOf(t, directTools.Tools); got != want {
		t.Errorf("tools through the gateway:\n%s\ndirectly:\n%s", got, want)
	}
	found := false
	for _, tool := range tools.Tools {
		if ui, ok := tool.Meta["ui"].(map[string]any); ok && ui["resourceUri"] == uri {
			found = true
		}
	}
	if !found {
		t.Fatalf("no tool's _meta.ui.resourceUri is %s: %s", uri, jsonOf(t, tools.Tools))
	}
	rd, err := cs.ReadResource(ctx, &gomcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := jsonOf(t, rd.Contents), jsonOf(t, directRead.Contents); got != want || len(rd.Contents) == 0 || rd.Contents[0].Text == "" {
		t.Errorf("%s through the gateway: %.300s\ndirectly: %.300s", uri, got, want)
	}
	t.Logf("%s: %s, %d bytes, the same through the gateway", uri, rd.Contents[0].MIMEType, len(rd.Contents[0].Text))
}

func TestParsePrefix(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want server.Prefix
		ok   bool
	}{
		{"", server.PrefixAuto, true}, {"auto", server.PrefixAuto, true}, {"on", server.PrefixOn, true},
		{"off", server.PrefixOff, true}, {"yes", server.PrefixAuto, false}, {"ON", server.PrefixAuto, false},
	} {
		got, err := server.ParsePrefix(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParsePrefix(%q) = %v, %v; want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// okRunner answers "ok": a Runner, for the tasks extension.
type okRunner struct{}

func (okRunner) Name() string        { return "ok" }
func (okRunner) Description() string { return "Answers ok." }
func (okRunner) Stream(context.Context, string) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) { yield(agent.Event{Type: agent.EventFinal, Text: "ok"}, nil) }
}

// switchable is a downstream server reached through NewTransport: each
// connection goes to the server current returns (nil: the connection
// fails), and drop ends the connection in place, so that the Manager
// reconnects.
type switchable struct {
	mu      sync.Mutex
	current func() *gomcp.Server
	last    *gomcp.ServerSession
}

func (s *switchable) set(f func() *gomcp.Server) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.current = f
}

func (s *switchable) newTransport(ctx context.Context) (gomcp.Transport, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current == nil || s.current() == nil {
		return nil, errors.New("not up")
	}
	st, ct := gomcp.NewInMemoryTransports()
	ss, err := s.current().Connect(ctx, st, nil)
	if err != nil {
		return nil, err
	}
	s.last = ss
	return ct, nil
}

func (s *switchable) drop() {
	s.mu.Lock()
	ss := s.last
	s.mu.Unlock()
	if ss != nil {
		_ = ss.Close()
	}
}

// extensionsCase is one case of TestFrontedExtensionsFollowServers.
type extensionsCase struct {
	name         string
	before       func() *gomcp.Server // the downstream at the gateway's start (nil result: not up)
	after        func() *gomcp.Server // what it becomes
	wantBefore   bool                 // the first session sees the extension
	wantAfter    bool                 // a session begun after the change does
	afterConnect bool                 // the change ends in a connection (else the server is gone)
}

// TestFrontedExtensionsFollowServers (issue 33, item 3): each session's
// initialize (or server/discover) declares the extensions of the fronted
// servers connected then, not those of the gateway's start: a server with
// the MCP Apps extension that connects later, or reconnects with it, is
// declared to the sessions that begin afterwards, and one that is gone no
// longer is. A session keeps what its initialize declared; the gateway's
// own extensions (tasks) are declared throughout.
func TestFrontedExtensionsFollowServers(t *testing.T) {
	plain := func() *gomcp.Server { return gomcp.NewServer(&gomcp.Implementation{Name: "plain", Version: "1"}, nil) }
	none := func() *gomcp.Server { return nil }
	tests := []extensionsCase{
		{name: "connects later", before: none, after: appServer, wantAfter: true, afterConnect: true},
		{name: "reconnects with the extension", before: plain, after: appServer, wantAfter: true, afterConnect: true},
		{name: "reconnects without it", before: appServer, after: plain, wantBefore: true, afterConnect: true},
		{name: "goes away", before: appServer, after: none, wantBefore: true},
	}
	// 2025-11-25 clients initialize; go-sdk's latest (2026-07-28) sends
	// server/discover.
	for _, protocol := range []string{"2025-11-25", ""} {
		for _, tt := range tests {
			t.Run(protocol+"/"+tt.name, func(t *testing.T) { tt.run(t, protocol) })
		}
	}
}

// run runs the case with clients at protocol ("": go-sdk's latest).
func (tt extensionsCase) run(t *testing.T, protocol string) {
	ctx := testkit.Ctx(t, time.Minute)
	down := &switchable{}
	down.set(tt.before)
	m, err := mcp.New(ctx, mcp.Config{RestartBackoff: 5 * time.Millisecond, MaxRestartBackoff: 20 * time.Millisecond,
		Servers: []mcp.ServerConfig{{Name: "base", Server: gomcp.NewServer(&gomcp.Implementation{Name: "base", Version: "1"}, nil)},
			{Name: "app", NewTransport: down.newTransport}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	status := func(name string) mcp.Status {
		for _, st := range m.Status() {
			if st.Name == name {
				return st
			}
		}
		return mcp.Status{}
	}
	testkit.WaitFor(t, 10*time.Second, "the base server ready", func() bool { return status("base").State == "ready" })
	if tt.before() != nil {
		testkit.WaitFor(t, 10*time.Second, "the app server ready", func() bool { return status("app").State == "ready" })
	}
	srv := newServer(t, server.Config{Servers: m, Client: new(server.Client), Permissions: agent.AllowAll(),
		Runners: []agent.Runner{okRunner{}}, Tasks: agent.NewMemoryStore(agent.MemoryStoreOptions{})})
	declares := func(cs *gomcp.ClientSession) (ui, tasks bool) {
		ext := cs.InitializeResult().Capabilities.Extensions
		_, ui = ext[uiExtension]
		_, tasks = ext["io.modelcontextprotocol/tasks"]
		return ui, tasks
	}
	first := connectMemAt(t, srv, nil, protocol)
	if ui, tasks := declares(first); ui != tt.wantBefore || !tasks {
		t.Fatalf("first session declares %s: %v, tasks: %v; want %v, true", uiExtension, ui, tasks, tt.wantBefore)
	}
	connects := status("app").Connects
	down.set(tt.after)
	down.drop()
	if tt.afterConnect {
		testkit.WaitFor(t, 10*time.Second, "the app server connected again", func() bool {
			st := status("app")
			return st.State == "ready" && st.Connects > connects
		})
	} else {
		testkit.WaitFor(t, 10*time.Second, "the app server gone", func() bool { return status("app").State != "ready" })
	}
	second := connectMemAt(t, srv, nil, protocol)
	if ui, tasks := declares(second); ui != tt.wantAfter || !tasks {
		t.Fatalf("session begun after the change declares %s: %v, tasks: %v; want %v, true", uiExtension, ui, tasks, tt.wantAfter)
	}
	if ui, _ := declares(first); ui != tt.wantBefore {
		t.Errorf("the first session's declaration changed to %v", ui)
	}
}

// failingLists is appServer whose listing by method fails while failing
// is set; fails counts the listings refused.
func failingLists(method string, failing *atomic.Bool, fails *atomic.Int32) *gomcp.Server {
	s := appServer()
	s.AddReceivingMiddleware(func(next gomcp.MethodHandler) gomcp.MethodHandler {
		return func(ctx context.Context, m string, req gomcp.Request) (gomcp.Result, error) {
			if m == method && failing.Load() {
				fails.Add(1)
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the listing broke"}
			}
			return next(ctx, m, req)
		}
	})
	return s
}

// TestFrontedListingFailurePolicy (issue 33): a fronted server whose
// resources, templates or prompts cannot be listed is a failure for the
// server's policy, as a toolset's failed listing is (Op the listing, Name
// the server), once per failed listing although the Manager shares the
// policy (it reports no such listing itself); a server whose listings
// answer reports none and offers its resources and prompts.
func TestFrontedListingFailurePolicy(t *testing.T) {
	tests := []struct {
		name   string
		method string // the downstream listing that fails ("" none)
		wantOp string
	}{
		{name: "resources fail", method: "resources/list", wantOp: "list resources"},
		{name: "templates fail", method: "resources/templates/list", wantOp: "list resource templates"},
		{name: "prompts fail", method: "prompts/list", wantOp: "list prompts"},
		{name: "listings answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testkit.Ctx(t, time.Minute)
			var mu sync.Mutex
			var seen []*failure.Error
			pol := failure.NewPolicy(failure.PolicyConfig{OnFailure: func(_ context.Context, o failure.Outcome) {
				mu.Lock()
				seen = append(seen, o.Err)
				mu.Unlock()
			}})
			var failing atomic.Bool
			var fails atomic.Int32
			failing.Store(tt.method != "")
			m, err := mcp.New(ctx, mcp.Config{Policy: pol, Servers: []mcp.ServerConfig{{Name: "app", Server: failingLists(tt.method, &failing, &fails)}}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = m.Close() })
			if err := m.WaitReady(ctx); err != nil {
				t.Fatal(err)
			}
			srv := newServer(t, server.Config{Servers: m, Policy: pol, Permissions: agent.AllowAll()})
			listings := func() (n int) {
				mu.Lock()
				defer mu.Unlock()
				for _, fe := range seen {
					if fe.Op == "list resources" || fe.Op == "list resource templates" || fe.Op == "list prompts" {
						n++
					}
				}
				return n
			}
			if tt.method == "" {
				cs := connectMem(t, srv, nil)
				res, err := cs.ListResources(ctx, nil)
				if err != nil || len(res.Resources) != 1 {
					t.Fatalf("resources/list: %v, %v; want the fronted clock", res, err)
				}
				if n := listings(); n != 0 {
					t.Fatalf("%d listing failures reported; want none: %v", n, seen)
				}
				return
			}
			testkit.WaitFor(t, 10*time.Second, "each failed listing reported", func() bool {
				return fails.Load() > 0 && listings() == int(fails.Load())
			})
			mu.Lock()
			defer mu.Unlock()
			for _, fe := range seen {
				if fe.Op == tt.wantOp && (fe.Name != "app" || fe.Source != failure.SourceMCP || !errors.As(fe.Err, new(*failure.Error))) {
					t.Errorf("listing failure %+v: want Op %q of server app wrapping the Manager's failure", fe, tt.wantOp)
				}
				if fe.Op != tt.wantOp && strings.HasPrefix(fe.Op, "list ") && fe.Op != "list tools" {
					t.Errorf("failure %+v: want only %q to fail", fe, tt.wantOp)
				}
			}
		})
	}
}
