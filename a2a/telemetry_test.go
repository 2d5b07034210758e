package a2a

import (
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// TestTraceContinuesAtPeer: a traced agent delegates to a peer over HTTP
// (JSON-RPC and REST); the peer's run is a child of the caller's
// execute_tool span, in the caller's trace.
func TestTraceContinuesAtPeer(t *testing.T) {
	for _, binding := range []string{"jsonrpc", "rest"} {
		t.Run(binding, func(t *testing.T) {
			ctx := ctxT(t)
			tp, exp := testkit.Tracing(t)
			remote, err := agent.New(ctx, agent.Config{Name: "remote", Model: llm.NewCyclic(llm.Say("remote answer")),
				Telemetry: agent.Telemetry{TracerProvider: tp}})
			if err != nil {
				t.Fatal(err)
			}
			srv, err := NewServer(ctx, ServerConfig{Agent: remote})
			if err != nil {
				t.Fatal(err)
			}
			hs := httptest.NewServer(srv)
			t.Cleanup(func() { hs.CloseClientConnections(); hs.Close(); _ = srv.Close() })
			peer := Peer{Name: "remote", URL: hs.URL}
			if binding == "rest" {
				peer.PreferREST = true
			}
			peers, err := NewToolset(ctx, ToolsetConfig{Peers: []Peer{peer}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = peers.Close() })
			caller, err := agent.New(ctx, agent.Config{Name: "caller", Toolsets: []agent.Toolset{peers}, Permissions: agent.AllowAll(),
				Model:     llm.NewScripted(llm.Calls(llm.CallTool("c1", "a2a__remote", map[string]any{"message": "hi"})), llm.Say("ok")),
				Telemetry: agent.Telemetry{TracerProvider: tp}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := caller.Run(ctx, "go"); err != nil {
				t.Fatal(err)
			}
			chat := "chat " + llm.NewScripted().Name()
			// The call is a CLIENT span, the request it makes a SERVER span
			// (a2a jsonrpc, a2a rest), the remote run its child.
			want := "invoke_agent caller\n  " + chat + "\n  execute_tool a2a__remote\n    a2a " + binding + "\n      invoke_agent remote\n        " +
				chat + "\n  " + chat + "\n"
			// The SERVER span ends when the handler returns, which may be
			// after the caller read the answer: wait for the tree.
			got := ""
			if !testkit.Poll(5*time.Second, func() bool {
				got = testkit.Tree(testkit.SpansFromStubs(exp.GetSpans(), ""))
				return got == want
			}) {
				t.Fatalf("span tree:\n%s\nwant:\n%s", got, want)
			}
			kinds := map[string]trace.SpanKind{}
			for _, s := range exp.GetSpans() {
				kinds[s.Name] = s.SpanKind
			}
			if kinds["execute_tool a2a__remote"] != trace.SpanKindClient || kinds["a2a "+binding] != trace.SpanKindServer {
				t.Errorf("span kinds %v: want the call CLIENT and the request SERVER", kinds)
			}
		})
	}
}

// TestToolsetRetryIsASpanEvent: a send the peer refused before acting on
// it (503) is sent again by the toolset's policy, and the retry is a
// switchboard.retry event, with the attempt and the failure kind, on the
// caller's span.
func TestToolsetRetryIsASpanEvent(t *testing.T) {
	for _, p := range []Peer{{NoStreaming: true}, {PreferREST: true}} {
		t.Run(map[bool]string{true: "jsonrpc blocking", false: "rest streaming"}[p.NoStreaming], func(t *testing.T) {
			srv, _ := newWorker(t, ServerConfig{})
			f := &firstDeliveryFails{srv: srv, seen: map[string]bool{}}
			hs := httptest.NewServer(f)
			defer hs.Close()
			ctx := ctxT(t)
			p.Name, p.URL = "w", hs.URL
			ts, err := NewToolset(ctx, ToolsetConfig{Peers: []Peer{p}, Policy: fastPolicy()})
			if err != nil {
				t.Fatal(err)
			}
			defer ts.Close()
			tools, _ := ts.Tools(ctx)
			tp, exp := testkit.Tracing(t)
			cctx, span := tp.Tracer("test").Start(ctx, "execute_tool a2a__w")
			res, err := tools[0].Call(cctx, json.RawMessage(`{"message":"hello once"}`))
			span.End()
			if err != nil || !strings.Contains(res.Text(), "echo: hello once") {
				t.Fatalf("res = %v, err = %v", res, err)
			}
			var events []string
			for _, s := range exp.GetSpans() {
				for _, e := range s.Events {
					ev := e.Name
					for _, kv := range e.Attributes {
						ev += " " + string(kv.Key) + "=" + kv.Value.Emit()
					}
					events = append(events, ev)
				}
			}
			want := "switchboard.retry switchboard.attempt=2 error.type=transient"
			if !slices.Contains(events, want) {
				t.Fatalf("the caller's span has events %q, want %q", events, want)
			}
		})
	}
}
