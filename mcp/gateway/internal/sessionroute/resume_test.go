package sessionroute

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/internal/testkit"
)

// TestResumeAcrossReplicas: a 2025-11-25 client whose call's response
// stream is cut mid-call resumes it (a GET with Last-Event-ID) through a
// balancer that sends each request to the next of three replicas: the
// resuming GET reaches the session's owner, whose event store replays the
// rest of the call, every progress notification once and the result.
func TestResumeAcrossReplicas(t *testing.T) {
	servers := make([]*gomcp.Server, 3)
	c := newCluster(t, 3, Config{}, func(i int) http.Handler {
		servers[i] = testServer("r" + string(rune('0'+i)))
		return gomcp.NewStreamableHTTPHandler(func(*http.Request) *gomcp.Server { return servers[i] },
			&gomcp.StreamableHTTPOptions{EventStore: gomcp.NewMemoryEventStore(nil)})
	})
	t.Cleanup(func() {
		for _, s := range servers {
			for ss := range s.Sessions() {
				_ = ss.Close()
			}
		}
	})
	cut := testkit.NewCutProxy(t, c.lb.URL, `"notifications/progress"`)
	var progress atomic.Int32
	cl := gomcp.NewClient(&gomcp.Implementation{Name: "resumer", Version: "1"}, &gomcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *gomcp.ProgressNotificationClientRequest) { progress.Add(1) }})
	cs, err := cl.Connect(testkit.Ctx(t, 20*time.Second), &gomcp.StreamableClientTransport{Endpoint: cut.URL, DisableStandaloneSSE: true},
		&gomcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	text, err := callText(t, cs, "steps", true)
	if err != nil || !strings.HasSuffix(text, ": done") {
		t.Fatalf("the call whose stream was cut: %q %v", text, err)
	}
	select {
	case <-cut.Cut:
	default:
		t.Fatal("the proxy never cut the stream: the test tested nothing")
	}
	if n := cut.Resumes.Load(); n < 1 {
		t.Errorf("%d requests resumed a stream, want at least 1", n)
	}
	// go-sdk's client may run a notification's handler after the call
	// returned; the replay sends every event before the result.
	waitFor(t, "3 progress notifications", func() bool { return progress.Load() >= 3 })
	if n := progress.Load(); n != 3 {
		t.Errorf("%d progress notifications, want 3 (each once)", n)
	}
	fwd, served, missing := c.counts()
	if fwd == 0 || fwd != served || missing != 0 {
		t.Errorf("forwarded %d, served %d, missing %d: want requests forwarded, all served", fwd, served, missing)
	}
}
