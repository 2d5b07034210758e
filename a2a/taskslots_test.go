package a2a

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
)

// gatedRunner answers once gate is closed (or its run is cancelled).
type gatedRunner struct{ gate chan struct{} }

func (gatedRunner) Name() string        { return "gated" }
func (gatedRunner) Description() string { return "Answers when let through." }
func (g gatedRunner) Stream(ctx context.Context, input string) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		select {
		case <-g.gate:
			yield(agent.Event{Type: agent.EventFinal, Text: "done: " + input}, nil)
		case <-ctx.Done():
			yield(agent.Event{}, ctx.Err())
		}
	}
}

func newGated(t *testing.T, cfg ServerConfig) (*Server, string, chan struct{}) {
	t.Helper()
	gate := make(chan struct{})
	cfg.Agent = gatedRunner{gate: gate}
	srv, err := NewServer(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		_ = srv.Close()
	})
	return srv, hs.URL, gate
}

// TestTaskBounds (issue 35, item 6): a server runs at most MaxTasks tasks
// and a caller at most MaxTasksPerCaller at once (by default too: an
// anonymous client could start any number); past a bound a message is
// refused with an error naming it, and a slot is free again when its task
// ends.
func TestTaskBounds(t *testing.T) {
	tests := []struct {
		name      string
		cfg       ServerConfig
		keys      []string // API key of each client ("" none)
		perClient int      // tasks each client starts before the refused one
		refusal   string
	}{
		{name: "per caller, anonymous", cfg: ServerConfig{MaxTasksPerCaller: 2}, keys: []string{""}, perClient: 2,
			refusal: "a caller may run at most 2 tasks at once on this server (ServerConfig.MaxTasksPerCaller)"},
		{name: "per caller, authenticated", cfg: ServerConfig{MaxTasksPerCaller: 2, Auth: &Auth{APIKeys: map[string]string{"ka": "ann", "kb": "bob"}}},
			keys: []string{"ka", "kb"}, perClient: 2, refusal: "at most 2 tasks at once on this server"},
		{name: "per server", cfg: ServerConfig{MaxTasks: 3, MaxTasksPerCaller: -1}, keys: []string{""}, perClient: 3,
			refusal: "the server runs at most 3 tasks at once (ServerConfig.MaxTasks)"},
		{name: "default per caller", cfg: ServerConfig{}, keys: []string{""}, perClient: defaultMaxTasksPerCaller,
			refusal: "at most 16 tasks at once"},
	}
	for _, tt := range tests {
		for _, binding := range []a2ago.TransportProtocol{a2ago.TransportProtocolJSONRPC, a2ago.TransportProtocolHTTPJSON} {
			t.Run(tt.name+"/"+string(binding), func(t *testing.T) {
				srv, base, gate := newGated(t, tt.cfg)
				ctx := ctxT(t)
				for _, key := range tt.keys {
					var hdr http.Header
					if key != "" {
						hdr = http.Header{"X-Api-Key": {key}}
					}
					c := clientFor(t, base, binding, hdr)
					for range tt.perClient {
						m := textMsg("work")
						m.Config = &a2ago.SendMessageConfig{ReturnImmediately: true}
						if _, err := c.SendMessage(ctx, m); err != nil {
							t.Fatalf("a task within the bound was refused: %v", err)
						}
					}
					_, err := c.SendMessage(ctx, textMsg("one more"))
					if err == nil || !strings.Contains(err.Error(), tt.refusal) {
						t.Fatalf("past the bound: %v; want an error naming %q", err, tt.refusal)
					}
				}
				if tt.cfg.MaxTasks > 0 { // the direct handler gives the typed failure
					_, err := srv.RequestHandler().SendMessage(ctx, textMsg("direct"))
					var fe *failure.Error
					if !errors.As(err, &fe) || fe.Kind != failure.Transient || !fe.Retryable || !errors.Is(err, a2ago.ErrServerError) ||
						!errors.Is(err, ErrTaskBound) {
						t.Fatalf("direct: %v; want a retryable Transient failure.Error wrapping the A2A server error and ErrTaskBound", err)
					}
				}
				// Let the tasks end: their slots are free again.
				close(gate)
				testkit.WaitFor(t, 10*time.Second, "slots freed", func() bool { return srv.slots.running() == 0 })
				m := textMsg("after")
				m.Config = &a2ago.SendMessageConfig{ReturnImmediately: true}
				var hdr http.Header
				if key := tt.keys[0]; key != "" {
					hdr = http.Header{"X-Api-Key": {key}}
				}
				if _, err := clientFor(t, base, binding, hdr).SendMessage(ctx, m); err != nil {
					t.Fatalf("a task after the others ended was refused: %v", err)
				}
			})
		}
	}
}

// TestDroppedStreamsEnd (issue 35, item 6): streams opened and dropped by
// an anonymous client start no more than MaxTasksPerCaller runs, and those
// runs end (their slots and goroutines with them) when the agent answers.
func TestDroppedStreamsEnd(t *testing.T) {
	srv, base, gate := newGated(t, ServerConfig{MaxTasksPerCaller: 4})
	c := clientFor(t, base, a2ago.TransportProtocolJSONRPC, nil)
	before := runtime.NumGoroutine()
	refused := 0
	for range 40 {
		ctx, cancel := context.WithCancel(ctxT(t))
		for _, err := range c.SendStreamingMessage(ctx, textMsg("stream")) {
			if err != nil {
				refused++
			}
			break // the client drops the stream after its first event
		}
		cancel()
	}
	if got := srv.slots.running(); got != 4 || refused != 36 {
		t.Fatalf("%d runs registered, %d streams refused; want 4 and 36", got, refused)
	}
	close(gate)
	testkit.WaitFor(t, 10*time.Second, "the dropped streams' runs end", func() bool { return srv.slots.running() == 0 })
	testkit.WaitFor(t, 10*time.Second, "their goroutines end", func() bool { return runtime.NumGoroutine() <= before+8 })
}

// TestPeerOf: an unauthenticated caller is its IPv4 address, or its IPv6
// /64, so one host cannot take MaxTasksPerCaller once per address of its
// /64.
func TestPeerOf(t *testing.T) {
	for _, c := range []struct{ addr, want string }{
		{"192.0.2.7:4000", "192.0.2.7"},
		{"[::ffff:192.0.2.7]:4000", "192.0.2.7"},
		{"[2001:db8:1:2:aaaa::1]:4000", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:bbbb::9]:5000", "2001:db8:1:2::/64"},
		{"[fe80::1%eth0]:4000", "fe80::/64"},
		{"pipe", "pipe"},
	} {
		if got := peerOf(c.addr); got != c.want {
			t.Errorf("peerOf(%q) = %q, want %q", c.addr, got, c.want)
		}
	}
}
