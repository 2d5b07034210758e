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

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/mcp/server"
)

// connectMem connects a go-sdk client to srv over an in-memory pipe.
func connectMem(t *testing.T, srv *server.Server, opts *gomcp.ClientOptions) *gomcp.ClientSession {
	t.Helper()
	return connectMemAt(t, srv, opts, "")
}

// connectMemAt is connectMem at a protocol revision ("": go-sdk's latest).
func connectMemAt(t *testing.T, srv *server.Server, opts *gomcp.ClientOptions, protocol string) *gomcp.ClientSession {
	t.Helper()
	ctx := testkit.Ctx(t, 30*time.Second)
	st, ct := gomcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := gomcp.NewClient(&gomcp.Implementation{Name: "test-client", Version: "1"}, opts)
	cs, err := c.Connect(ctx, ct, &gomcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

func newServer(t *testing.T, cfg server.Config) *server.Server {
	t.Helper()
	srv, err := server.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// TestRunnerAsTool: an agent offered as a Runner answers over MCP; its run's
// events arrive as progress notifications; its permission ask goes to the
// MCP client as an elicitation (through Server.Elicitor), and the tool runs
// only when the client accepts.
func TestRunnerAsTool(t *testing.T) {
	for _, c := range []struct{ protocol, answer string }{
		{"2025-11-25", "accept"}, {"2025-11-25", "decline"},
		{"", "accept"}, {"", "decline"}, // go-sdk's latest: 2026-07-28, multi round-trip requests
	} {
		answer := c.answer
		t.Run(c.protocol+"/"+answer, func(t *testing.T) {
			var wrote atomic.Int32
			write := agent.NewFuncTool(agent.ToolSpec{Name: "write_note", Description: "writes", Destructive: true,
				InputSchema: json.RawMessage(`{"type":"object"}`)},
				func(context.Context, json.RawMessage) (*agent.Result, error) {
					wrote.Add(1)
					return agent.TextResult("written"), nil
				})
			var srv *server.Server
			model := llm.NewScripted(llm.Calls(llm.ToolCall{ID: "1", Name: "write_note", Args: json.RawMessage(`{}`)}), llm.Say("done"))
			a, err := agent.New(context.Background(), agent.Config{Name: "scribe", Description: "writes notes", Model: model,
				Tools: []agent.Tool{write}, Elicitor: agent.ElicitorFunc(func(ctx context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
					return srv.Elicitor().Elicit(ctx, e)
				})})
			if err != nil {
				t.Fatal(err)
			}
			srv = newServer(t, server.Config{Runners: []agent.Runner{a}})
			var asked atomic.Int32
			var mu sync.Mutex
			var progress []string
			cs := connectMemAt(t, srv, &gomcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *gomcp.ElicitRequest) (*gomcp.ElicitResult, error) {
					asked.Add(1)
					if !strings.Contains(req.Params.Message, "write_note") {
						t.Errorf("the question does not name the tool: %q", req.Params.Message)
					}
					return &gomcp.ElicitResult{Action: answer}, nil
				},
				ProgressNotificationHandler: func(_ context.Context, req *gomcp.ProgressNotificationClientRequest) {
					mu.Lock()
					progress = append(progress, req.Params.Message)
					mu.Unlock()
				}}, c.protocol)
			params := &gomcp.CallToolParams{Name: "scribe", Arguments: map[string]any{"input": "write it"}}
			params.SetProgressToken("p1")
			res, err := cs.CallTool(testkit.Ctx(t, 30*time.Second), params)
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError || res.Content[0].(*gomcp.TextContent).Text != "done" {
				t.Errorf("result %+v", res.Content[0])
			}
			if asked.Load() != 1 {
				t.Errorf("the client was asked %d times, want 1", asked.Load())
			}
			if want := int32(map[string]int{"accept": 1, "decline": 0}[answer]); wrote.Load() != want {
				t.Errorf("the tool ran %d times, want %d", wrote.Load(), want)
			}
			if got := cs.InitializeResult().ProtocolVersion; c.protocol != "" && got != c.protocol {
				t.Errorf("negotiated %s", got)
			}
			if c.protocol == "" {
				if got := cs.InitializeResult().ProtocolVersion; got < "2026-07-28" {
					t.Errorf("negotiated %s; the multi round-trip path was not taken", got)
				}
				return // progress of a call that outlives its first request is not delivered
			}
			// Notifications are handled on the client's goroutines: they may
			// be seen shortly after the result.
			testkit.WaitFor(t, 20*time.Second, "progress notifications of the run's steps", func() bool {
				mu.Lock()
				joined := strings.Join(progress, "|")
				mu.Unlock()
				return strings.Contains(joined, "calling write_note") && strings.Contains(joined, "scribe: answered")
			})
		})
	}
}

// TestCallRefusals: rate limits, an ask the client cannot answer, invalid
// arguments, a panicking tool and a tool that ignores its timeout each get
// an error result and an audit record, and the server goes on.
func TestCallRefusals(t *testing.T) {
	obj := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)
	tools := []agent.Tool{
		agent.NewFuncTool(agent.ToolSpec{Name: "ok", ReadOnly: true, InputSchema: obj},
			func(context.Context, json.RawMessage) (*agent.Result, error) { return agent.TextResult("fine"), nil }),
		agent.NewFuncTool(agent.ToolSpec{Name: "boom", ReadOnly: true},
			func(context.Context, json.RawMessage) (*agent.Result, error) { panic("kaboom") }),
		agent.NewFuncTool(agent.ToolSpec{Name: "stuck", ReadOnly: true, Timeout: 50 * time.Millisecond},
			func(context.Context, json.RawMessage) (*agent.Result, error) {
				time.Sleep(2500 * time.Millisecond)
				return nil, nil
			}),
		agent.NewFuncTool(agent.ToolSpec{Name: "delete_all", Destructive: true},
			func(context.Context, json.RawMessage) (*agent.Result, error) { return agent.TextResult("deleted"), nil }),
	}
	var mu sync.Mutex
	outcomes := map[string][]string{}
	srv := newServer(t, server.Config{Toolsets: []agent.Toolset{agent.NewToolset("t", tools...)},
		RateLimit: 0.001, RateBurst: 5,
		Audit: func(_ context.Context, r server.AuditRecord) {
			mu.Lock()
			outcomes[r.Tool] = append(outcomes[r.Tool], r.Outcome)
			mu.Unlock()
		}})
	cs := connectMem(t, srv, nil) // declares no elicitation: an ask cannot be put
	calls := []struct {
		tool, args, outcome, text string
	}{
		{"ok", `{"n":1}`, "ok", "fine"},
		{"ok", `{"n":"x"}`, "invalid_args", "invalid arguments"},
		{"boom", `{}`, "failed", ""},
		{"stuck", `{}`, "failed", ""},
		{"delete_all", `{}`, "denied", "cannot be asked"},
		{"ok", `{"n":2}`, "rate_limited", "rate limit"},
	}
	for _, c := range calls {
		res, err := cs.CallTool(testkit.Ctx(t, 10*time.Second), &gomcp.CallToolParams{Name: c.tool, Arguments: json.RawMessage(c.args)})
		if err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
		text := res.Content[0].(*gomcp.TextContent).Text
		if (c.outcome != "ok") != res.IsError || !strings.Contains(text, c.text) {
			t.Errorf("%s %s: error %v, %q", c.tool, c.args, res.IsError, text)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	got := map[string][]string{}
	for _, c := range calls {
		got[c.tool] = append(got[c.tool], c.outcome)
	}
	for tool, want := range got {
		if strings.Join(outcomes[tool], ",") != strings.Join(want, ",") {
			t.Errorf("audit of %s: %v, want %v", tool, outcomes[tool], want)
		}
	}
}

// TestListChanged: a toolset's change reaches the client as
// notifications/tools/list_changed and a new listing.
func TestListChanged(t *testing.T) {
	ts := &changingToolset{ch: make(chan struct{}, 1)}
	ts.set("a")
	srv := newServer(t, server.Config{Toolsets: []agent.Toolset{ts}, Permissions: agent.AllowAll()})
	changed := make(chan struct{}, 4)
	cs := connectMem(t, srv, &gomcp.ClientOptions{ToolListChangedHandler: func(context.Context, *gomcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	if got := toolNames(t, cs); strings.Join(got, ",") != "a" {
		t.Fatalf("tools %v", got)
	}
	ts.set("b")
	ts.ch <- struct{}{}
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no list_changed notification")
	}
	if got := toolNames(t, cs); strings.Join(got, ",") != "b" {
		t.Errorf("tools after the change %v, want [b]", got)
	}
}

type changingToolset struct {
	mu    sync.Mutex
	tools []agent.Tool
	ch    chan struct{}
}

func (c *changingToolset) set(names ...string) {
	var tools []agent.Tool
	for _, n := range names {
		tools = append(tools, agent.NewFuncTool(agent.ToolSpec{Name: n, ReadOnly: true},
			func(context.Context, json.RawMessage) (*agent.Result, error) { return agent.TextResult(n), nil }))
	}
	c.mu.Lock()
	c.tools = tools
	c.mu.Unlock()
}

func (c *changingToolset) Name() string { return "changing" }
func (c *changingToolset) Tools(context.Context) ([]agent.Tool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tools, nil
}
func (c *changingToolset) Changed() <-chan struct{} { return c.ch }

// TestSkillsAsPromptsAndResources: a skill is a prompt (its body) and its
// bundled file a resource.
func TestSkillsAsPromptsAndResources(t *testing.T) {
	srv := newReferenceServer(t)
	cs := connectMem(t, srv, nil)
	ctx := testkit.Ctx(t, 10*time.Second)
	p, err := cs.GetPrompt(ctx, &gomcp.GetPromptParams{Name: "test_simple_prompt"})
	if err != nil {
		t.Fatal(err)
	}
	if txt := p.Messages[0].Content.(*gomcp.TextContent).Text; !strings.Contains(txt, "This is a simple prompt for testing.") {
		t.Errorf("prompt text %q", txt)
	}
	r, err := cs.ReadResource(ctx, &gomcp.ReadResourceParams{URI: "skill://test_simple_prompt/references/notes.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Contents[0].Text; !strings.Contains(got, "Reference notes") {
		t.Errorf("resource text %q", got)
	}
}

// TestClientModel: an agent built on Server.Model thinks with the model of
// the MCP client that calls it (sampling/createMessage), on both protocol
// revisions.
func TestClientModel(t *testing.T) {
	for _, protocol := range []string{"2025-11-25", ""} {
		t.Run("protocol="+protocol, func(t *testing.T) {
			var srv *server.Server
			a, err := agent.New(context.Background(), agent.Config{Name: "echoer", Description: "answers with the caller's model",
				Model: modelFunc(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
					return srv.Model().Generate(ctx, req)
				})})
			if err != nil {
				t.Fatal(err)
			}
			srv = newServer(t, server.Config{Runners: []agent.Runner{a}})
			var sampled atomic.Int32
			cs := connectMemAt(t, srv, &gomcp.ClientOptions{
				CreateMessageHandler: func(_ context.Context, req *gomcp.CreateMessageRequest) (*gomcp.CreateMessageResult, error) {
					sampled.Add(1)
					last := req.Params.Messages[len(req.Params.Messages)-1].Content.(*gomcp.TextContent).Text
					return &gomcp.CreateMessageResult{Model: "client-model", Role: "assistant",
						Content: &gomcp.TextContent{Text: "client says: " + last}}, nil
				}}, protocol)
			txt, isErr := callText(t, cs, "echoer", map[string]any{"input": "ping"})
			if isErr || txt != "client says: ping" || sampled.Load() != 1 {
				t.Errorf("answer %q (error %v), sampled %d times", txt, isErr, sampled.Load())
			}
		})
	}
}

type modelFunc func(ctx context.Context, req *llm.Request) (*llm.Response, error)

func (modelFunc) Name() string { return "func" }
func (f modelFunc) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return f(ctx, req)
}

// TestRequestStateBound: a multi round-trip call continues only for the
// client that made it: another session presenting its requestState, or a
// made-up one, is refused, and the owner's retry still completes the call.
func TestRequestStateBound(t *testing.T) {
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
	srv := newServer(t, server.Config{Toolsets: []agent.Toolset{agent.NewToolset("t", ask)}})
	manual := &gomcp.ClientOptions{MultiRoundTrip: &gomcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *gomcp.ElicitRequest) (*gomcp.ElicitResult, error) {
			return &gomcp.ElicitResult{Action: "accept"}, nil // declares the capability; never called here
		}}
	owner, other := connectMem(t, srv, manual), connectMem(t, srv, manual)
	ctx := testkit.Ctx(t, 20*time.Second)
	first, err := owner.CallTool(ctx, &gomcp.CallToolParams{Name: "ask", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if first.RequestState == "" || first.InputRequests["q"] == nil {
		t.Fatalf("no input-required result: %+v", first)
	}
	for name, c := range map[string]struct {
		cs    *gomcp.ClientSession
		state string
	}{"other session": {other, first.RequestState}, "made-up state": {owner, "not-a-state"}} {
		res, err := c.cs.CallTool(ctx, &gomcp.CallToolParams{Name: "ask", Arguments: map[string]any{}, RequestState: c.state,
			InputResponses: gomcp.InputResponseMap{"q": &gomcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "mallory"}}}})
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || !strings.Contains(res.Content[0].(*gomcp.TextContent).Text, "unknown or expired requestState") {
			t.Errorf("%s: %+v", name, res.Content)
		}
	}
	res, err := owner.CallTool(ctx, &gomcp.CallToolParams{Name: "ask", Arguments: map[string]any{}, RequestState: first.RequestState,
		InputResponses: gomcp.InputResponseMap{"q": &gomcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "alice"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if txt := res.Content[0].(*gomcp.TextContent).Text; res.IsError || txt != "accept alice" {
		t.Errorf("the owner's retry: %q (error %v)", txt, res.IsError)
	}
}

// TestStateless: a stateless HTTP server (replicas without affinity) lists
// and calls for go-sdk's client at both revisions, and a tool's question
// gets a prompt answer (a decline, or the client's answer through a multi
// round-trip retry), never a hung call.
func TestStateless(t *testing.T) {
	ask := agent.NewFuncTool(agent.ToolSpec{Name: "ask", ReadOnly: true},
		func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
			call, _ := agent.CallFromContext(ctx)
			res, err := call.Elicit(ctx, agent.Elicitation{Kind: agent.ElicitForm, Message: "ok?"})
			if err != nil {
				return nil, err
			}
			return agent.TextResult(string(res.Action)), nil
		})
	plain := agent.NewFuncTool(agent.ToolSpec{Name: "plain", ReadOnly: true},
		func(context.Context, json.RawMessage) (*agent.Result, error) { return agent.TextResult("plain"), nil })
	srv := newServer(t, server.Config{Toolsets: []agent.Toolset{agent.NewToolset("t", ask, plain)}, Stateless: true})
	url := serveHTTP(t, srv, "")
	for _, protocol := range []string{"2025-11-25", ""} {
		t.Run("protocol="+protocol, func(t *testing.T) {
			c := gomcp.NewClient(&gomcp.Implementation{Name: "stateless", Version: "1"}, &gomcp.ClientOptions{
				ElicitationHandler: func(context.Context, *gomcp.ElicitRequest) (*gomcp.ElicitResult, error) {
					return &gomcp.ElicitResult{Action: "accept"}, nil
				}})
			cs, err := c.Connect(testkit.Ctx(t, 10*time.Second), &gomcp.StreamableClientTransport{Endpoint: url},
				&gomcp.ClientSessionOptions{ProtocolVersion: protocol})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if got := toolNames(t, cs); len(got) != 2 {
				t.Errorf("tools %v", got)
			}
			if txt, isErr := callText(t, cs, "plain", map[string]any{}); isErr || txt != "plain" {
				t.Errorf("plain: %q", txt)
			}
			txt, isErr := callText(t, cs, "ask", map[string]any{})
			t.Logf("a question on stateless HTTP at %q: %q (error %v)", cs.InitializeResult().ProtocolVersion, txt, isErr)
			if isErr || (txt != "accept" && txt != "decline") {
				t.Errorf("ask: %q (error %v)", txt, isErr)
			}
		})
	}
}
