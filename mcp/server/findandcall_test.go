package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/guard"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/mcp"
	"github.com/switchboard-dev/switchboard/mcp/server"
)

// issueTools are the tools behind the find-and-call tests: two allowed,
// one the policy denies.
func issueTools() agent.Toolset {
	tool := func(name, desc string, ro bool, schema string) agent.Tool {
		return agent.NewFuncTool(agent.ToolSpec{Name: name, Description: desc, ReadOnly: ro, InputSchema: json.RawMessage(schema)},
			func(_ context.Context, args json.RawMessage) (*agent.Result, error) {
				return agent.TextResult(name + " " + string(args)), nil
			})
	}
	return agent.NewToolset("issues",
		tool("create_issue", "Create a new issue in the tracker with a title and a body", false,
			`{"type":"object","properties":{"title":{"type":"string"},"body":{"type":"string"}},"required":["title"]}`),
		tool("search_issues", "Search the tracker's issues by words", true,
			`{"type":"object","properties":{"q":{"type":"string"}}}`),
		tool("delete_repository", "Delete the repository and every issue in it", false, `{"type":"object"}`),
	)
}

// findCall calls find_tools and decodes its answer.
func findCall(t *testing.T, cs *gomcp.ClientSession, args map[string]any) ([]map[string]any, string, bool) {
	t.Helper()
	txt, isErr := callText(t, cs, "find_tools", args)
	if isErr {
		return nil, txt, true
	}
	var out struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal([]byte(txt), &out); err != nil {
		t.Fatalf("find_tools answered %q: %v", txt, err)
	}
	return out.Tools, txt, false
}

func foundNames(tools []map[string]any) []string {
	var names []string
	for _, tl := range tools {
		names = append(names, tl["name"].(string))
	}
	return names
}

// TestFindAndCall: with FindAndCall the client lists find_tools and
// call_tool only; find_tools finds the served tools (with their schema
// and why) but never a denied one; call_tool calls them through the one
// tools/call path: permissions, argument validation, guards and the
// audit apply, under the called tool's name.
func TestFindAndCall(t *testing.T) {
	deny, err := guard.NewDenyList(guard.DenyConfig{Words: []string{"rm -rf"}})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var audit []server.AuditRecord
	srv := newServer(t, server.Config{Toolsets: []agent.Toolset{issueTools()}, FindAndCall: true,
		Permissions: &agent.Permissions{Rules: []agent.Rule{{Tool: "*", Permission: agent.Allow}, {Tool: "delete_*", Permission: agent.Deny}}},
		Guards:      []agent.GuardRule{{Guard: deny, At: agent.GuardToolCall}},
		Audit:       func(_ context.Context, r server.AuditRecord) { mu.Lock(); audit = append(audit, r); mu.Unlock() }})
	cs := connectMem(t, srv, nil)
	if got := toolNames(t, cs); !slices.Equal(got, []string{"call_tool", "find_tools"}) {
		t.Fatalf("tools/list %v, want only call_tool and find_tools", got)
	}

	t.Run("find", func(t *testing.T) {
		for _, tc := range []struct {
			name    string
			args    map[string]any
			want    []string // found, in any order
			notWant []string
			err     string // in the error result
		}{
			{name: "query", args: map[string]any{"query": "create a new issue"}, want: []string{"create_issue"}},
			{name: "limit", args: map[string]any{"query": "issue tracker", "limit": 1}},
			{name: "queries", args: map[string]any{"queries": []string{"open a new issue", "search issues by words"}},
				want: []string{"create_issue", "search_issues"}},
			{name: "denied never found", args: map[string]any{"query": "delete the repository"}, notWant: []string{"delete_repository"}},
			{name: "no query", args: map[string]any{}, err: "give query"},
			{name: "bad limit", args: map[string]any{"query": "x", "limit": 500}, err: "limit 500"},
			{name: "bad type", args: map[string]any{"query": 3}, err: "invalid arguments for find_tools"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				tools, txt, isErr := findCall(t, cs, tc.args)
				if tc.err != "" {
					if !isErr || !strings.Contains(txt, tc.err) {
						t.Errorf("%q (error %v), want an error naming %q", txt, isErr, tc.err)
					}
					return
				}
				if isErr {
					t.Fatalf("error %q", txt)
				}
				got := foundNames(tools)
				for _, w := range tc.want {
					if !slices.Contains(got, w) {
						t.Errorf("found %v, want %s among them", got, w)
					}
				}
				for _, w := range tc.notWant {
					if slices.Contains(got, w) {
						t.Errorf("found %v, with %s the policy denies", got, w)
					}
				}
				if l, ok := tc.args["limit"].(int); ok && len(got) > l {
					t.Errorf("found %v, more than limit %d", got, l)
				}
				for _, tl := range tools {
					if tl["why"] == "" || tl["inputSchema"] == nil || tl["description"] == "" {
						t.Errorf("found tool without why, description or schema: %v", tl)
					}
				}
			})
		}
		mu.Lock()
		audit = nil
		mu.Unlock()
		tools, _, _ := findCall(t, cs, map[string]any{"query": "create a new issue"})
		if schema, _ := json.Marshal(tools[0]["inputSchema"]); !strings.Contains(string(schema), `"required":["title"]`) {
			t.Errorf("create_issue's schema as found: %s", schema)
		}
		mu.Lock()
		if len(audit) != 1 || audit[0].Tool != "find_tools" || audit[0].Outcome != "ok" {
			t.Errorf("audit of find_tools %+v", audit)
		}
		mu.Unlock()
	})

	t.Run("call", func(t *testing.T) {
		for _, tc := range []struct {
			name    string
			args    map[string]any
			want    string
			isErr   bool
			tool    string // audited (call_tool itself when it names no tool)
			outcome string
		}{
			{"allowed", map[string]any{"name": "create_issue", "arguments": map[string]any{"title": "bug"}}, `create_issue {"title":"bug"}`, false, "create_issue", "ok"},
			{"read", map[string]any{"name": "search_issues"}, "search_issues {}", false, "search_issues", "ok"},
			{"denied", map[string]any{"name": "delete_repository", "arguments": map[string]any{}}, "unknown tool", true, "delete_repository", "unknown_tool"},
			{"invalid arguments", map[string]any{"name": "create_issue", "arguments": map[string]any{"body": "x"}}, "invalid arguments for create_issue", true, "create_issue", "invalid_args"},
			{"guarded", map[string]any{"name": "create_issue", "arguments": map[string]any{"title": "rm -rf /"}}, "guardrail", true, "create_issue", "guarded"},
			{"unknown", map[string]any{"name": "no_such_tool"}, "unknown tool", true, "no_such_tool", "unknown_tool"},
			{"itself", map[string]any{"name": "call_tool", "arguments": map[string]any{"name": "create_issue"}}, "unknown tool", true, "call_tool", "unknown_tool"},
			{"no name", map[string]any{"arguments": map[string]any{}}, "give name", true, "call_tool", "invalid_args"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				mu.Lock()
				audit = nil
				mu.Unlock()
				txt, isErr := callText(t, cs, "call_tool", tc.args)
				if isErr != tc.isErr || !strings.Contains(txt, tc.want) {
					t.Errorf("%q (error %v), want %q (error %v)", txt, isErr, tc.want, tc.isErr)
				}
				mu.Lock()
				defer mu.Unlock()
				if len(audit) != 1 || audit[0].Tool != tc.tool || audit[0].Outcome != tc.outcome {
					t.Errorf("audit %+v, want one record of %s, %s", audit, tc.tool, tc.outcome)
				}
			})
		}
	})
}

// TestFindAndCallLimits: the client's rate limit applies to call_tool's
// and find_tools' calls as to any tools/call.
func TestFindAndCallLimits(t *testing.T) {
	srv := newServer(t, server.Config{Toolsets: []agent.Toolset{issueTools()}, FindAndCall: true,
		Permissions: agent.AllowAll(), RateLimit: 0.001, RateBurst: 1})
	cs := connectMem(t, srv, nil)
	for i, want := range []struct {
		text  string
		isErr bool
	}{{"search_issues", false}, {"rate limit exceeded", true}} {
		txt, isErr := callText(t, cs, "call_tool", map[string]any{"name": "search_issues"})
		if isErr != want.isErr || !strings.Contains(txt, want.text) {
			t.Errorf("call %d: %q (error %v), want %q", i, txt, isErr, want.text)
		}
	}
	if txt, isErr := callText(t, cs, "find_tools", map[string]any{"query": "issues"}); !isErr || !strings.Contains(txt, "rate limit exceeded") {
		t.Errorf("find_tools past the limit: %q (error %v)", txt, isErr)
	}
}

// TestFindAndCallAsk: a tool the policy asks about is found, and
// call_tool puts the question to the client as a tools/call would (an
// elicitation before 2026-07-28, an input-required result the client
// answers on its retry of call_tool after): the tool runs only when the
// person accepts, and a client that cannot be asked is refused.
func TestFindAndCallAsk(t *testing.T) {
	for _, tc := range []struct {
		protocol, answer string // answer "": the client cannot be asked
		ran              bool
	}{
		{"2025-11-25", "accept", true}, {"2025-11-25", "decline", false},
		{"", "accept", true}, {"", "decline", false}, // go-sdk's latest: multi round-trip requests
		{"2025-11-25", "", false},
	} {
		t.Run(tc.protocol+"/"+tc.answer, func(t *testing.T) {
			srv := newServer(t, server.Config{Toolsets: []agent.Toolset{issueTools()}, FindAndCall: true,
				Permissions: &agent.Permissions{Rules: []agent.Rule{{Tool: "*", Permission: agent.Allow}, {Tool: "create_*", Permission: agent.Ask}}}})
			var opts *gomcp.ClientOptions
			if tc.answer != "" {
				opts = &gomcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *gomcp.ElicitRequest) (*gomcp.ElicitResult, error) {
					if !strings.Contains(req.Params.Message, "create_issue") {
						t.Errorf("the question does not name the tool: %q", req.Params.Message)
					}
					return &gomcp.ElicitResult{Action: tc.answer}, nil
				}}
			}
			cs := connectMemAt(t, srv, opts, tc.protocol)
			tools, _, _ := findCall(t, cs, map[string]any{"query": "create a new issue"})
			if !slices.Contains(foundNames(tools), "create_issue") {
				t.Fatalf("found %v, want create_issue", foundNames(tools))
			}
			txt, isErr := callText(t, cs, "call_tool", map[string]any{"name": "create_issue", "arguments": map[string]any{"title": "x"}})
			if tc.ran && (isErr || txt != `create_issue {"title":"x"}`) || !tc.ran && (!isErr || !strings.Contains(txt, "permission denied")) {
				t.Errorf("%q (error %v), want the tool run: %v", txt, isErr, tc.ran)
			}
		})
	}
}

// TestFindAndCallFollowsChanges: the index follows the toolsets: a tool
// added is found and callable, a tool removed is neither, and the listing
// stays the two tools.
func TestFindAndCallFollowsChanges(t *testing.T) {
	ts := &changingToolset{ch: make(chan struct{}, 1)}
	ts.set("alpha_report")
	srv := newServer(t, server.Config{Toolsets: []agent.Toolset{ts}, Permissions: agent.AllowAll(), FindAndCall: true})
	cs := connectMem(t, srv, nil)
	for _, step := range []struct {
		tools  []string
		found  string
		absent string
	}{
		{[]string{"alpha_report"}, "alpha_report", "beta_summary"},
		{[]string{"beta_summary"}, "beta_summary", "alpha_report"},
	} {
		ts.set(step.tools...) // not signalled: find_tools reads the toolsets' current tools
		tools, _, _ := findCall(t, cs, map[string]any{"queries": []string{"alpha report", "beta summary"}})
		if got := foundNames(tools); !slices.Equal(got, []string{step.found}) {
			t.Fatalf("found %v, want [%s]", got, step.found)
		}
		if txt, isErr := callText(t, cs, "call_tool", map[string]any{"name": step.found}); isErr || txt != step.found {
			t.Errorf("call %s: %q (error %v)", step.found, txt, isErr)
		}
		if txt, isErr := callText(t, cs, "call_tool", map[string]any{"name": step.absent}); !isErr || !strings.Contains(txt, "unknown tool") {
			t.Errorf("call %s (gone): %q (error %v)", step.absent, txt, isErr)
		}
		if got := toolNames(t, cs); !slices.Equal(got, []string{"call_tool", "find_tools"}) {
			t.Errorf("tools/list %v", got)
		}
	}
}

// TestFindAndCallFronted: in front of server-everything (a real reference
// MCP server over stdio, Config.Servers), find_tools finds its tools with
// their own schemas and call_tool answers with the server's own result; a
// denied tool of it is neither found nor called.
func TestFindAndCallFronted(t *testing.T) {
	ctx := testkit.Ctx(t, 90*time.Second)
	client := new(server.Client)
	m, err := mcp.New(ctx, mcp.Config{Servers: []mcp.ServerConfig{everythingStdio(t, filepath.Join(t.TempDir(), "pid"))},
		Elicitor: client.Elicitor(), Sampler: client.Sampler()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, server.Config{Servers: m, Client: client, FindAndCall: true,
		Permissions: &agent.Permissions{Rules: []agent.Rule{{Tool: "*", Permission: agent.Allow}, {Tool: "*sum*", Permission: agent.Deny}}}})
	cs := connectMem(t, srv, nil)
	if got := toolNames(t, cs); !slices.Equal(got, []string{"call_tool", "find_tools"}) {
		t.Fatalf("tools/list %v", got)
	}
	for _, tc := range []struct {
		query, want, notWant string
	}{
		{"echo back a message", "echo", ""},
		{"add two numbers and get their sum", "", "get-sum"},
	} {
		tools, txt, isErr := findCall(t, cs, map[string]any{"query": tc.query, "limit": 10})
		got := foundNames(tools)
		if isErr || tc.want != "" && !slices.Contains(got, tc.want) || slices.ContainsFunc(got, func(n string) bool { return strings.Contains(n, "sum") }) {
			t.Errorf("find %q: %v (%q, error %v), want %q and no denied *sum* tool", tc.query, got, txt, isErr, tc.want)
		}
	}
	txt, isErr := callText(t, cs, "call_tool", map[string]any{"name": "echo", "arguments": map[string]any{"message": "hi there"}})
	if isErr || !strings.Contains(txt, "hi there") {
		t.Errorf("call_tool echo: %q (error %v)", txt, isErr)
	}
	txt, isErr = callText(t, cs, "call_tool", map[string]any{"name": "get-sum", "arguments": map[string]any{"a": 1, "b": 2}})
	if !isErr || !strings.Contains(txt, "unknown tool") {
		t.Errorf("call_tool of the denied get-sum: %q (error %v)", txt, isErr)
	}
}

// Listing modes of flakyToolset.
const (
	listOK int32 = iota
	listFail
	listPanic
	listHang // until released, whatever its context
)

// flakyToolset lists issueTools' tools, or fails, or panics, or hangs, as
// its mode says; lists counts its listings, and a listing that hangs
// signals hanging (when set) without blocking.
type flakyToolset struct {
	inner   agent.Toolset
	mode    atomic.Int32
	lists   atomic.Int32
	release chan struct{}
	hanging chan struct{}
}

func (f *flakyToolset) Name() string { return "flaky" }
func (f *flakyToolset) Tools(ctx context.Context) ([]agent.Tool, error) {
	f.lists.Add(1)
	switch f.mode.Load() {
	case listFail:
		return nil, failure.Wrap(failure.Transient, failure.SourceMCP, errors.New("connection reset"))
	case listPanic:
		panic("the toolset broke")
	case listHang:
		select {
		case f.hanging <- struct{}{}:
		default:
		}
		<-f.release
	}
	return f.inner.Tools(ctx)
}

// TestFindToolsFailurePolicy (issue 33, item 2): find_tools runs under the
// server's failure policy like any tool. A toolset whose listing fails or
// panics is searched in its last known tools, the failure reaching
// OnFailure as a *failure.Error of the listing (a panic no longer ends the
// process), and every find is audited. A listing that does not end holds
// no find past its deadline (TestHungListing has the rest).
func TestFindToolsFailurePolicy(t *testing.T) {
	tests := []struct {
		name      string
		mode      int32
		finds     int
		wantErr   []bool         // per find: an error result
		wantKinds []failure.Kind // OnFailure's, in order
		wantLists int32          // listings during the finds
	}{
		{name: "listing fails", mode: listFail, finds: 1, wantErr: []bool{false},
			wantKinds: []failure.Kind{failure.Transient}, wantLists: 1},
		// A toolset that goes on failing is reported once, when it starts.
		{name: "listing panics", mode: listPanic, finds: 2, wantErr: []bool{false, false},
			wantKinds: []failure.Kind{failure.Panic}, wantLists: 2},
		// The listing hangs, whatever its context: the first find abandons
		// it at its CallTimeout, the toolset starting to fail (a Timeout
		// of the listing, reported once), and answers from the last known
		// tools; the later finds start no listing while that one runs and
		// answer at once. No find fails, so find_tools' circuit stays
		// closed (it used to be held by the hung listing: each find timed
		// out, and the third met an open circuit).
		{name: "listing hangs", mode: listHang, finds: 3, wantErr: []bool{false, false, false},
			wantKinds: []failure.Kind{failure.Timeout}, wantLists: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var seen []*failure.Error
			var audit []server.AuditRecord
			pol := failure.NewPolicy(failure.PolicyConfig{BreakerFailures: 2, OnFailure: func(_ context.Context, o failure.Outcome) {
				mu.Lock()
				seen = append(seen, o.Err)
				mu.Unlock()
			}})
			ts := &flakyToolset{inner: issueTools(), release: make(chan struct{})}
			srv := newServer(t, server.Config{Toolsets: []agent.Toolset{ts}, FindAndCall: true, Policy: pol, CallTimeout: 50 * time.Millisecond,
				Permissions: &agent.Permissions{Rules: []agent.Rule{{Tool: "*", Permission: agent.Allow}}},
				Audit:       func(_ context.Context, r server.AuditRecord) { mu.Lock(); audit = append(audit, r); mu.Unlock() }})
			t.Cleanup(func() { close(ts.release) }) // before the server closes
			cs := connectMem(t, srv, nil)
			ts.mode.Store(tt.mode)
			before := ts.lists.Load()
			for i := range tt.finds {
				found, txt, isErr := findCall(t, cs, map[string]any{"query": "create a new issue"})
				if isErr != tt.wantErr[i] {
					t.Fatalf("find %d: error %v (%q); want error %v", i+1, isErr, txt, tt.wantErr[i])
				}
				if !isErr && !slices.Contains(foundNames(found), "create_issue") {
					t.Fatalf("find %d found %v; want the last known create_issue", i+1, foundNames(found))
				}
				if isErr && txt == "" {
					t.Fatalf("find %d answered an empty error; want the failure's model text", i+1)
				}
			}
			if got := ts.lists.Load() - before; got != tt.wantLists {
				t.Errorf("%d listings during the finds; want %d", got, tt.wantLists)
			}
			mu.Lock()
			defer mu.Unlock()
			var kinds []failure.Kind
			for _, fe := range seen {
				kinds = append(kinds, fe.Kind)
				listing := fe.Op == "list tools" || fe.Name == "flaky"
				switch {
				case listing && (fe.Op != "list tools" || fe.Name != "flaky"):
					t.Errorf("listing failure %+v: want Op list tools of toolset flaky", fe)
				case !listing && fe.Tool != "find_tools":
					t.Errorf("failure %+v: want it to name the tool find_tools", fe)
				}
			}
			if !slices.Equal(kinds, tt.wantKinds) {
				t.Errorf("OnFailure saw %v; want %v", kinds, tt.wantKinds)
			}
			if len(audit) != tt.finds {
				t.Errorf("%d audit records; want one per find (%d)", len(audit), tt.finds)
			}
			for i, r := range audit {
				if want := map[bool]string{false: "ok", true: "failed"}[tt.wantErr[i]]; r.Tool != "find_tools" || r.Outcome != want {
					t.Errorf("audit record %d: %s %s; want find_tools %s", i, r.Tool, r.Outcome, want)
				}
				// The call timeout's grace (2s) for a search that
				// ignored its context was never needed.
				if r.Duration >= 2*time.Second {
					t.Errorf("find %d took %v; want it answered at its deadline (50ms), not after the grace", i+1, r.Duration)
				}
			}
		})
	}
}

// TestHungListing: a toolset whose listing hangs, whatever its context,
// holds no resynchronisation. The sync that meets the hang (a tools/list
// here, which its client then gives up) abandons the listing when its
// context ends, and the hang reaches OnFailure once, as a Timeout of the
// listing. Meanwhile a find_tools waits for that sync no longer than its
// CallTimeout and answers from the offered tools; and while the listing
// runs, the many syncs after (tools/list, find_tools) start no other
// listing of the toolset and answer at once from its last known tools.
// Once released, the abandoned listing's goroutine ends and the next sync
// lists the toolset again.
func TestHungListing(t *testing.T) {
	for _, find := range []bool{false, true} {
		t.Run(map[bool]string{false: "tools", true: "find and call"}[find], func(t *testing.T) {
			ctx := testkit.Ctx(t, 30*time.Second)
			failed := make(chan *failure.Error, 10)
			pol := failure.NewPolicy(failure.PolicyConfig{OnFailure: func(_ context.Context, o failure.Outcome) {
				select {
				case failed <- o.Err:
				default:
					t.Errorf("OnFailure saw more than 10 failures: %v", o.Err)
				}
			}})
			ts := &flakyToolset{inner: issueTools(), release: make(chan struct{}), hanging: make(chan struct{}, 1)}
			srv := newServer(t, server.Config{Toolsets: []agent.Toolset{ts}, FindAndCall: find, Policy: pol, CallTimeout: 50 * time.Millisecond,
				Permissions: &agent.Permissions{Rules: []agent.Rule{{Tool: "*", Permission: agent.Allow}}}})
			cs := connectMem(t, srv, nil)
			release := sync.OnceFunc(func() { close(ts.release) })
			t.Cleanup(release) // before the session and the server close
			offered := []string{"create_issue", "delete_repository", "search_issues"}
			if find {
				offered = []string{"call_tool", "find_tools"}
			}
			listNames := func(ctx context.Context) ([]string, error) {
				res, err := cs.ListTools(ctx, nil)
				if err != nil {
					return nil, err
				}
				var names []string
				for _, tl := range res.Tools {
					names = append(names, tl.Name)
				}
				slices.Sort(names)
				return names, nil
			}
			leaks := goleak.IgnoreCurrent()
			before := ts.lists.Load()
			ts.mode.Store(listHang)

			lctx, cancel := context.WithCancel(ctx)
			defer cancel()
			first := make(chan error, 1)
			go func() { _, err := cs.ListTools(lctx, nil); first <- err }()
			select {
			case <-ts.hanging:
			case <-ctx.Done():
				t.Fatal("the tools/list did not list the toolset")
			}
			if find {
				found, txt, isErr := findCall(t, cs, map[string]any{"query": "create a new issue"})
				if isErr || !slices.Contains(foundNames(found), "create_issue") {
					t.Fatalf("find while a sync hangs: %v (%q, error %v); want the offered create_issue", foundNames(found), txt, isErr)
				}
			}
			cancel()
			select {
			case err := <-first:
				if err == nil {
					t.Fatal("the cancelled tools/list succeeded")
				}
			case <-ctx.Done():
				t.Fatal("the cancelled tools/list did not return")
			}
			select {
			case fe := <-failed:
				if !errors.Is(fe, failure.Timeout) || fe.Name != "flaky" || fe.Op != "list tools" {
					t.Errorf("OnFailure saw %+v; want a Timeout of toolset flaky's list tools", fe)
				}
			case <-ctx.Done():
				t.Fatal("the abandoned listing was not reported")
			}

			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for range 8 {
				wg.Go(func() {
					names, err := listNames(testkit.Ctx(t, 5*time.Second)) // half listTimeout
					if err == nil && !slices.Equal(names, offered) {
						err = fmt.Errorf("tools/list offered %v; want %v", names, offered)
					}
					if err != nil {
						errs <- err
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if find {
				for i := range 3 {
					found, txt, isErr := findCall(t, cs, map[string]any{"query": "create a new issue"})
					if isErr || !slices.Contains(foundNames(found), "create_issue") {
						t.Errorf("find %d while the listing hangs: %v (%q, error %v); want the last known create_issue", i+1, foundNames(found), txt, isErr)
					}
				}
			}
			if got := ts.lists.Load() - before; got != 1 {
				t.Errorf("%d listings while the toolset hangs; want 1", got)
			}
			if len(failed) > 0 {
				t.Errorf("OnFailure saw %+v too; want the hang reported once", <-failed)
			}

			release()
			goleak.VerifyNone(t, leaks) // the abandoned listing's goroutine ended
			ts.mode.Store(listOK)
			if names, err := listNames(ctx); err != nil || !slices.Equal(names, offered) {
				t.Errorf("tools/list after the release: %v, %v; want %v", names, err, offered)
			}
			if got := ts.lists.Load() - before; got != 2 {
				t.Errorf("%d listings after the release; want 2 (the next sync lists again)", got)
			}
		})
	}
}

// TestFindAndCallTitlesAndInstructions: find_tools indexes what the
// agent's tool search does: the fronted servers' tools' titles (MCP's
// title, else annotations.title) and their servers' instructions, and the
// titles of the toolsets' own tools.
func TestFindAndCallTitlesAndInstructions(t *testing.T) {
	ctx := testkit.Ctx(t, time.Minute)
	ledger := gomcp.NewServer(&gomcp.Implementation{Name: "ledger", Version: "1.0.0"},
		&gomcp.ServerOptions{Instructions: "Closes the books: month-end accruals and depreciation."})
	ok := func(context.Context, *gomcp.CallToolRequest, map[string]any) (*gomcp.CallToolResult, any, error) {
		return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: "ok"}}}, nil, nil
	}
	gomcp.AddTool(ledger, &gomcp.Tool{Name: "op_17", Title: "Reconcile a bank statement", Description: "Runs operation 17."}, ok)
	gomcp.AddTool(ledger, &gomcp.Tool{Name: "op_18", Description: "Runs operation 18.",
		Annotations: &gomcp.ToolAnnotations{Title: "Post a journal entry"}}, ok)
	m, err := mcp.New(ctx, mcp.Config{Servers: []mcp.ServerConfig{{Name: "ledger", Server: ledger}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	if err := m.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	own := agent.NewToolset("own", agent.NewFuncTool(agent.ToolSpec{Name: "job_3", Title: "Archive old invoices", Description: "Runs job 3.", ReadOnly: true},
		func(context.Context, json.RawMessage) (*agent.Result, error) { return agent.TextResult("ok"), nil }))
	srv := newServer(t, server.Config{Servers: m, Toolsets: []agent.Toolset{own}, FindAndCall: true, Permissions: agent.AllowAll()})
	cs := connectMem(t, srv, nil)
	for _, tc := range []struct{ name, query, want string }{
		{"title", "reconcile the bank statement", "op_17"},
		{"annotations' title", "post a journal entry", "op_18"},
		{"server's instructions", "book the month-end accruals", "op_18"},
		{"own tool's title", "archive the old invoices", "job_3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tools, txt, isErr := findCall(t, cs, map[string]any{"query": tc.query})
			if got := foundNames(tools); isErr || !slices.Contains(got, tc.want) {
				t.Errorf("find %q: %v (%q, error %v), want %s", tc.query, got, txt, isErr, tc.want)
			}
		})
	}
}
