package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/mcp/server"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// go-sdk's HTTP client keeps idle connections' goroutines.
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"))
}

// newBus is an embedded NATS server with JetStream.
func newBus(t *testing.T) *bus.Bus {
	t.Helper()
	b, err := bus.New(context.Background(), bus.Config{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// askTool asks the caller for n names, one question after the other, and
// answers with them.
func askTool(n int) agent.Tool {
	return agent.NewFuncTool(agent.ToolSpec{Name: "ask", ReadOnly: true},
		func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
			call, _ := agent.CallFromContext(ctx)
			var names []string
			for i := range n {
				res, err := call.Elicit(ctx, agent.Elicitation{Kind: agent.ElicitForm, Message: fmt.Sprintf("name %d?", i),
					Schema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
				if err != nil {
					return nil, err
				}
				names = append(names, fmt.Sprint(res.Content["name"]))
			}
			return agent.TextResult(strings.Join(names, " ")), nil
		})
}

// replicas are n gateways over servers with tools, sharing b (nil: no
// NATS), behind a round-robin balancer; next is the balancer's counter.
type replicas struct {
	gateways []*Gateway
	lb       *httptest.Server
	next     atomic.Int32
}

func newReplicas(t *testing.T, n int, b *bus.Bus, scfg server.Config) *replicas {
	t.Helper()
	rs := &replicas{}
	var handlers []http.Handler
	for i := range n {
		srv, err := server.New(context.Background(), scfg)
		if err != nil {
			t.Fatal(err)
		}
		cfg := Config{Replica: fmt.Sprintf("r%d", i)}
		if b != nil {
			cfg.Conn, cfg.JetStream = b.Conn(), b.JetStream()
		}
		g, err := New(context.Background(), srv, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close(); _ = g.Close() })
		rs.gateways = append(rs.gateways, g)
		handlers = append(handlers, g.Handler())
	}
	rs.lb = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handlers[int(rs.next.Add(1))%len(handlers)].ServeHTTP(w, r)
	}))
	t.Cleanup(rs.lb.Close)
	return rs
}

// connect is a go-sdk client at protocol (go-sdk's latest when "")
// through the balancer; it answers every question with the next name.
func (rs *replicas) connect(t *testing.T, protocol string) *gomcp.ClientSession {
	t.Helper()
	var asked atomic.Int32
	c := gomcp.NewClient(&gomcp.Implementation{Name: "lb-client", Version: "1"}, &gomcp.ClientOptions{
		ElicitationHandler: func(context.Context, *gomcp.ElicitRequest) (*gomcp.ElicitResult, error) {
			return &gomcp.ElicitResult{Action: "accept", Content: map[string]any{"name": fmt.Sprintf("n%d", asked.Add(1))}}, nil
		}})
	cs, err := c.Connect(testkit.Ctx(t, 20*time.Second), &gomcp.StreamableClientTransport{Endpoint: rs.lb.URL + "/mcp"},
		&gomcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func callText(t *testing.T, cs *gomcp.ClientSession, tool string) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(testkit.Ctx(t, 20*time.Second), &gomcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	if len(res.Content) == 0 {
		return "", res.IsError
	}
	return res.Content[0].(*gomcp.TextContent).Text, res.IsError
}

// TestReplicasWithoutAffinity: two stateless replicas sharing NATS behind
// a round-robin balancer; a 2026-07-28 client's call asks two questions,
// so its three requests alternate between the replicas: the retries that
// land on the replica not holding the call are relayed to it over NATS,
// its next question comes back through the relay as a question (an
// input-required result), and the call completes with both answers.
// Without NATS the retry on the other replica is refused.
func TestReplicasWithoutAffinity(t *testing.T) {
	scfg := server.Config{Toolsets: []agent.Toolset{agent.NewToolset("t", askTool(2))}, Stateless: true}
	t.Run("relayed", func(t *testing.T) {
		rs := newReplicas(t, 2, newBus(t), scfg)
		cs := rs.connect(t, "")
		for i := range 3 {
			txt, isErr := callText(t, cs, "ask")
			if isErr || !strings.HasPrefix(txt, "n") || len(strings.Fields(txt)) != 2 {
				t.Errorf("call %d: %q (error %v)", i, txt, isErr)
			}
		}
		var relayed, served int64
		for _, g := range rs.gateways {
			relayed += g.relay.relayed.Load()
			served += g.relay.served.Load()
		}
		if relayed == 0 || served != relayed {
			t.Errorf("%d retries relayed, %d served by their call's replica", relayed, served)
		}
	})
	t.Run("relayed question", func(t *testing.T) {
		// The retry loop by hand: the question a relayed retry answers
		// with must say it is one (resultType input_required), as every
		// client but go-sdk's reads it.
		rs := newReplicas(t, 2, newBus(t), scfg)
		c := gomcp.NewClient(&gomcp.Implementation{Name: "lb-client", Version: "1"},
			&gomcp.ClientOptions{MultiRoundTrip: &gomcp.MultiRoundTripOptions{Disabled: true},
				ElicitationHandler: func(context.Context, *gomcp.ElicitRequest) (*gomcp.ElicitResult, error) {
					return nil, errors.New("answered by hand") // declares the capability
				}})
		cs, err := c.Connect(testkit.Ctx(t, 20*time.Second), &gomcp.StreamableClientTransport{Endpoint: rs.lb.URL + "/mcp"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		params := &gomcp.CallToolParams{Name: "ask", Arguments: map[string]any{}}
		for round := 0; ; round++ {
			res, err := cs.CallTool(testkit.Ctx(t, 20*time.Second), params)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.InputRequests) == 0 {
				if txt := res.Content[0].(*gomcp.TextContent).Text; round != 2 || txt != "a1 a2" {
					t.Errorf("after %d questions: %q", round, txt)
				}
				break
			}
			if !res.NeedsInput() || res.RequestState == "" {
				t.Fatalf("question %d: resultType not input_required (state %q)", round, res.RequestState)
			}
			responses := gomcp.InputResponseMap{}
			for id := range res.InputRequests {
				responses[id] = &gomcp.ElicitResult{Action: "accept", Content: map[string]any{"name": fmt.Sprintf("a%d", round+1)}}
			}
			params = &gomcp.CallToolParams{Name: "ask", Arguments: map[string]any{}, RequestState: res.RequestState, InputResponses: responses}
		}
		var relayed int64
		for _, g := range rs.gateways {
			relayed += g.relay.relayed.Load()
		}
		if relayed != 1 {
			t.Errorf("%d retries relayed, want 1 (the second request of the call)", relayed)
		}
	})
	t.Run("without NATS", func(t *testing.T) {
		rs := newReplicas(t, 2, nil, scfg)
		cs := rs.connect(t, "")
		if txt, isErr := callText(t, cs, "ask"); !isErr {
			t.Errorf("without NATS a retry on the other replica completed: %q", txt)
		}
	})
}

// TestSessionsAcrossReplicas: a stateful session whose requests land on
// three replicas in turn initializes, lists and answers questions (a
// 2025-11-25 client: server requests on its GET stream; a 2026-07-28
// one: multi round-trip retries): every request reaches the session's
// owner. Without NATS the session is unknown to the other replicas.
func TestSessionsAcrossReplicas(t *testing.T) {
	scfg := server.Config{Toolsets: []agent.Toolset{agent.NewToolset("t", askTool(1))}}
	b := newBus(t)
	rs := newReplicas(t, 3, b, scfg)
	for _, protocol := range []string{"2025-11-25", ""} {
		cs := rs.connect(t, protocol)
		if _, err := cs.ListTools(testkit.Ctx(t, 10*time.Second), nil); err != nil {
			t.Fatalf("%q: list: %v", protocol, err)
		}
		for i := range 3 {
			if txt, isErr := callText(t, cs, "ask"); isErr || !strings.HasPrefix(txt, "n") {
				t.Errorf("%q call %d: %q (error %v)", protocol, i, txt, isErr)
			}
		}
	}
	alone := newReplicas(t, 2, nil, scfg)
	c := gomcp.NewClient(&gomcp.Implementation{Name: "lb-client", Version: "1"}, nil)
	cs, err := c.Connect(testkit.Ctx(t, 10*time.Second), &gomcp.StreamableClientTransport{Endpoint: alone.lb.URL + "/mcp"}, nil)
	if err == nil {
		_, err = cs.ListTools(testkit.Ctx(t, 10*time.Second), nil)
		_ = cs.Close()
	}
	if err == nil {
		t.Error("without NATS a session's requests on another replica were served")
	}
}

// TestAuditStream: with Audit every call, refused ones too, is one record
// on the audit stream, subject <prefix>.audit.<tool>.
func TestAuditStream(t *testing.T) {
	b := newBus(t)
	echo := agent.NewFuncTool(agent.ToolSpec{Name: "echo", ReadOnly: true},
		func(context.Context, json.RawMessage) (*agent.Result, error) { return agent.TextResult("hi"), nil })
	srv, err := server.New(context.Background(), server.Config{Toolsets: []agent.Toolset{agent.NewToolset("t", echo)},
		RateLimit: 0.001, RateBurst: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	g, err := New(context.Background(), srv, Config{Conn: b.Conn(), Audit: true, Prefix: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	hs := httptest.NewServer(g.Handler())
	defer hs.Close()
	cs, err := gomcp.NewClient(&gomcp.Implementation{Name: "audit-client", Version: "1"}, nil).
		Connect(testkit.Ctx(t, 10*time.Second), &gomcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ok", "ok", "ok", "rate_limited"}
	for range want {
		callText(t, cs, "echo")
	}
	_ = cs.Close()
	var got []server.AuditRecord
	testkit.WaitFor(t, 10*time.Second, "the audit records", func() bool {
		got = got[:0]
		cons, err := b.JetStream().OrderedConsumer(testkit.Ctx(t, 5*time.Second), AuditStream, jetstream.OrderedConsumerConfig{})
		if err != nil {
			return false
		}
		batch, err := cons.FetchNoWait(100)
		if err != nil {
			return false
		}
		for m := range batch.Messages() {
			var r server.AuditRecord
			if err := json.Unmarshal(m.Data(), &r); err != nil || m.Subject() != "acme.audit.echo" {
				t.Errorf("record %s on %s: %v", m.Data(), m.Subject(), err)
			}
			got = append(got, r)
		}
		return len(got) >= len(want)
	})
	for i, r := range got {
		if i >= len(want) || r.Outcome != want[i] || r.Tool != "echo" || r.Client == "" {
			t.Errorf("record %d: %+v, want outcome %s", i, r, want[i%len(want)])
		}
	}
}

// probe is a GET of h's path p: its status and body.
func probe(t *testing.T, h http.Handler, p string) (int, string) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, p, nil))
	b, _ := io.ReadAll(w.Result().Body)
	return w.Code, strings.TrimSpace(string(b))
}

// TestProbes: /healthz answers while the gateway serves; /readyz while
// the replica should get new requests: 503 naming NATS while the
// connection is down, 503 "shutting down" after Drain (and Close), while
// /healthz still answers; an MCP endpoint at a probe's path keeps it.
func TestProbes(t *testing.T) {
	b, err := bus.New(context.Background(), bus.Config{Listen: "127.0.0.1:0", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	nc, err := nats.Connect(b.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(context.Background(), server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	g, err := New(context.Background(), srv, Config{Conn: nc})
	if err != nil {
		t.Fatal(err)
	}
	h := g.Handler()
	for p, want := range map[string]string{livePath: "ok", readyPath: "ready"} {
		if code, body := probe(t, h, p); code != http.StatusOK || body != want {
			t.Errorf("%s: %d %q, want 200 %q", p, code, body, want)
		}
	}
	_ = g.Close()
	nc.Close()
	if code, body := probe(t, h, readyPath); code != http.StatusServiceUnavailable || body != "shutting down" {
		t.Errorf("/readyz after Close: %d %q", code, body)
	}
	g.health.draining.Store(false) // to see the connection's state alone
	if code, body := probe(t, h, readyPath); code != http.StatusServiceUnavailable || !strings.Contains(body, "NATS") {
		t.Errorf("/readyz without NATS: %d %q", code, body)
	}
	if code, _ := probe(t, h, livePath); code != http.StatusOK {
		t.Errorf("/healthz without NATS: %d", code)
	}

	alone, err := New(context.Background(), srv, Config{Path: readyPath})
	if err != nil {
		t.Fatal(err)
	}
	defer alone.Close()
	alone.Drain()
	if code, body := probe(t, alone.Handler(), readyPath); code == http.StatusServiceUnavailable || body == "shutting down" {
		t.Errorf("the MCP endpoint at %s answered as the probe: %d %q", readyPath, code, body)
	}
	if code, body := probe(t, alone.Handler(), livePath); code != http.StatusOK || body != "ok" {
		t.Errorf("%s: %d %q", livePath, code, body)
	}
}

// TestNewRefuses: bad configuration is a failure.Config error naming what
// was wrong, before any I/O.
func TestNewRefuses(t *testing.T) {
	srv, err := server.New(context.Background(), server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for name, c := range map[string]struct {
		srv  *server.Server
		cfg  Config
		want string
	}{
		"no server":          {nil, Config{}, "server"},
		"replica with a dot": {srv, Config{Replica: "a.b"}, "Replica"},
		"audit without NATS": {srv, Config{Audit: true}, "Audit"},
		"relative path":      {srv, Config{Path: "mcp"}, "Path"},
		"bad pattern":        {srv, Config{Path: "/mcp/{x"}, "Path"},
	} {
		t.Run(name, func(t *testing.T) {
			g, err := New(context.Background(), c.srv, c.cfg)
			if err == nil {
				_ = g.Close()
				t.Fatal("accepted")
			}
			if !errors.Is(err, failure.Config) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v: want a Config error naming %s", err, c.want)
			}
		})
	}
}

// TestRetryNamingNoReplica: a retry whose requestState names a replica
// nobody serves is answered with an error result at once (no responder);
// one whose first part cannot name a replica (a wildcard) is not sent
// anywhere and is answered as a state the server does not know.
func TestRetryNamingNoReplica(t *testing.T) {
	rs := newReplicas(t, 1, newBus(t), server.Config{Toolsets: []agent.Toolset{agent.NewToolset("t", askTool(1))}, Stateless: true})
	c := gomcp.NewClient(&gomcp.Implementation{Name: "c", Version: "1"}, &gomcp.ClientOptions{MultiRoundTrip: &gomcp.MultiRoundTripOptions{Disabled: true}})
	cs, err := c.Connect(testkit.Ctx(t, 10*time.Second), &gomcp.StreamableClientTransport{Endpoint: rs.lb.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for state, want := range map[string]string{"gone.ABC": "could not be reached", "*.ABC": "unknown or expired", ">.ABC": "unknown or expired"} {
		res, err := cs.CallTool(testkit.Ctx(t, 10*time.Second), &gomcp.CallToolParams{Name: "ask", Arguments: map[string]any{}, RequestState: state})
		if err != nil {
			t.Fatalf("%s: %v", state, err)
		}
		if txt := res.Content[0].(*gomcp.TextContent).Text; !res.IsError || !strings.Contains(txt, want) {
			t.Errorf("%s: %q (error %v), want %q", state, txt, res.IsError, want)
		}
	}
	if n := rs.gateways[0].relay.relayed.Load(); n != 1 {
		t.Errorf("%d retries relayed, want 1", n)
	}
}

// TestRelayCarriesTheTrace: a relayed retry carries the W3C trace context
// of the call it continues in its NATS headers, and an untraced one none.
func TestRelayCarriesTheTrace(t *testing.T) {
	nc := newBus(t).Conn()
	srv, err := server.New(context.Background(), server.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	log := zerolog.Nop()
	r, err := startRelay(srv, nc, "test", "a", &log)
	if err != nil {
		t.Fatal(err)
	}
	defer r.sub.Unsubscribe()
	defer r.cancel()
	seen := make(chan nats.Header, 2)
	owner, err := nc.Subscribe(r.subject("b"), func(m *nats.Msg) {
		seen <- m.Header
		_ = m.Respond([]byte(`{"content":[{"type":"text","text":"ok"}]}`))
	})
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Unsubscribe()
	tp, _ := testkit.Tracing(t)
	ctx, span := tp.Tracer("test").Start(testkit.Ctx(t, 10*time.Second), "call")
	defer span.End()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"traced", ctx, fmt.Sprintf("00-%s-%s-01", span.SpanContext().TraceID(), span.SpanContext().SpanID())},
		{"untraced", testkit.Ctx(t, 10*time.Second), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if res := r.forward(tc.ctx, "b", server.Retry{State: "s"}); res.IsError {
				t.Fatalf("forward: %+v", res)
			}
			if h := <-seen; h.Get("traceparent") != tc.want {
				t.Errorf("traceparent %q, want %q", h.Get("traceparent"), tc.want)
			}
		})
	}
}
