package a2a

import (
	"net/http/httptest"
	"testing"

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
			spans := testkit.SpansFromStubs(exp.GetSpans(), "")
			chat := "chat " + llm.NewScripted().Name()
			// The call is a CLIENT span, the request it makes a SERVER span
			// (a2a jsonrpc, a2a rest), the remote run its child.
			want := "invoke_agent caller\n  " + chat + "\n  execute_tool a2a__remote\n    a2a " + binding + "\n      invoke_agent remote\n        " +
				chat + "\n  " + chat + "\n"
			if got := testkit.Tree(spans); got != want {
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
