package sessionroute

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/internal/testkit"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"))
}

// cluster is a NATS bus and the replicas sharing it, behind a round-robin
// balancer without affinity.
type cluster struct {
	t        testing.TB
	b        *bus.Bus
	replicas []*replica
	lb       *httptest.Server
	n        atomic.Int64
	mu       sync.Mutex
	down     map[int]bool
	// the clients' own transport: httptest's Close closes
	// http.DefaultTransport's idle connections
	clientTr *http.Transport
}

// replica is a router in front of a local handler, served over HTTP.
type replica struct {
	name   string
	router *Router
	http   *httptest.Server
	mcp    *gomcp.Server
	cancel context.CancelFunc
	closed bool
}

// newBus is an embedded NATS server with JetStream.
func newBus(t testing.TB) *bus.Bus {
	t.Helper()
	b, err := bus.New(context.Background(), bus.Config{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// newCluster starts n replicas whose local handler local(i) gives (nil:
// go-sdk's stateful handler on a server with the test tools).
func newCluster(t testing.TB, n int, cfg Config, local func(i int) http.Handler) *cluster {
	t.Helper()
	c := &cluster{t: t, b: newBus(t), down: map[int]bool{}, clientTr: &http.Transport{}}
	for i := range n {
		rp := &replica{name: fmt.Sprintf("r%d", i)}
		var h http.Handler
		if local != nil {
			h = local(i)
		} else {
			rp.mcp = testServer(rp.name)
			h = gomcp.NewStreamableHTTPHandler(func(*http.Request) *gomcp.Server { return rp.mcp }, nil)
		}
		rc := cfg
		rc.Conn, rc.JS, rc.Prefix, rc.Replica, rc.Local = c.b.Conn(), c.b.JetStream(), c.b.Prefix(), rp.name, h
		if rp.mcp != nil {
			srv := rp.mcp
			rc.Sessions = func(yield func(string) bool) {
				for ss := range srv.Sessions() {
					if !yield(ss.ID()) {
						return
					}
				}
			}
		}
		if os.Getenv("SESSIONROUTE_DEBUG") != "" {
			l := zerolog.New(os.Stderr).Level(zerolog.DebugLevel).With().Timestamp().Logger()
			rc.Logger = &l
		}
		ctx, cancel := context.WithCancel(context.Background())
		r, err := New(ctx, rc)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		rp.router, rp.cancel = r, cancel
		rp.http = httptest.NewServer(r)
		c.replicas = append(c.replicas, rp)
	}
	c.lb = httptest.NewServer(http.HandlerFunc(c.balance))
	t.Cleanup(func() {
		c.lb.CloseClientConnections() // streams still open end
		c.lb.Close()
		c.clientTr.CloseIdleConnections()
		for _, rp := range c.replicas {
			c.stop(rp)
		}
	})
	return c
}

// balance serves each request by the next replica up, in turn.
func (c *cluster) balance(w http.ResponseWriter, req *http.Request) {
	for range len(c.replicas) {
		i := int(c.n.Add(1)) % len(c.replicas)
		c.mu.Lock()
		down := c.down[i]
		c.mu.Unlock()
		if down {
			continue
		}
		// The replica's handler is called in-process: behind
		// httputil.ReverseProxy (or any proxy on http.Transport), go-sdk's
		// client loses a call's stream now and then ("request terminated
		// without response", 11 of 60 runs with go-sdk's handler alone and
		// no router; 0 of 60 without the proxy).
		c.replicas[i].router.ServeHTTP(w, req)
		return
	}
	http.Error(w, "no replica up", http.StatusBadGateway)
}

// stop takes a replica out of the balancer and shuts it down.
func (c *cluster) stop(rp *replica) {
	for i, x := range c.replicas {
		if x == rp {
			c.mu.Lock()
			c.down[i] = true
			c.mu.Unlock()
		}
	}
	if rp.closed {
		return
	}
	rp.closed = true
	rp.cancel()
	_ = rp.router.Close()
	rp.http.CloseClientConnections()
	rp.http.Close()
	if rp.mcp != nil { // its sessions die with it
		for ss := range rp.mcp.Sessions() {
			_ = ss.Close()
		}
	}
}

func (c *cluster) counts() (forwarded, served, missing int64) {
	for _, rp := range c.replicas {
		forwarded += rp.router.forwarded.Load()
		served += rp.router.served.Load()
		missing += rp.router.missing.Load()
	}
	return
}

// testServer has a tool that elicits and one that reports progress.
func testServer(name string) *gomcp.Server {
	s := gomcp.NewServer(&gomcp.Implementation{Name: name, Version: "1"}, nil)
	type none struct{}
	gomcp.AddTool(s, &gomcp.Tool{Name: "ask"}, func(ctx context.Context, req *gomcp.CallToolRequest, _ none) (*gomcp.CallToolResult, any, error) {
		res, err := req.Session.Elicit(ctx, &gomcp.ElicitParams{Message: "name?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
		if err != nil {
			return nil, nil, err
		}
		return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: fmt.Sprintf("%s: %s %v", name, res.Action, res.Content["name"])}}}, nil, nil
	})
	gomcp.AddTool(s, &gomcp.Tool{Name: "steps"}, func(ctx context.Context, req *gomcp.CallToolRequest, _ none) (*gomcp.CallToolResult, any, error) {
		for i := range 3 {
			if tok := req.Params.GetProgressToken(); tok != nil {
				_ = req.Session.NotifyProgress(ctx, &gomcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i + 1), Total: 3})
			}
			time.Sleep(20 * time.Millisecond)
		}
		return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: name + ": done"}}}, nil, nil
	})
	return s
}

// session connects a 2025-11-25 go-sdk client through the balancer.
func (c *cluster) session(t *testing.T, progress *atomic.Int32) *gomcp.ClientSession {
	t.Helper()
	cl := gomcp.NewClient(&gomcp.Implementation{Name: "route-test", Version: "1"}, &gomcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *gomcp.ElicitRequest) (*gomcp.ElicitResult, error) {
			return &gomcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
		ProgressNotificationHandler: func(context.Context, *gomcp.ProgressNotificationClientRequest) {
			if progress != nil {
				progress.Add(1)
			}
		}})
	cs, err := cl.Connect(testkit.Ctx(t, 20*time.Second), &gomcp.StreamableClientTransport{Endpoint: c.lb.URL, HTTPClient: &http.Client{Transport: c.clientTr}},
		&gomcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func callText(t *testing.T, cs *gomcp.ClientSession, tool string, progress bool) (string, error) {
	t.Helper()
	p := &gomcp.CallToolParams{Name: tool, Arguments: map[string]any{}}
	if progress {
		p.SetProgressToken("tok-" + tool)
	}
	res, err := cs.CallTool(testkit.Ctx(t, 20*time.Second), p)
	if err != nil {
		return "", err
	}
	if res.IsError || len(res.Content) == 0 {
		return "", fmt.Errorf("%s: error result %v", tool, res.Content)
	}
	return res.Content[0].(*gomcp.TextContent).Text, nil
}

// TestRoutesAcrossReplicas: a 2025-11-25 client whose requests land on
// three replicas in turn initializes, lists, answers an elicitation and
// gets progress: every request for the session reached its owner, and
// requests really crossed replicas. Its DELETE removes the entry.
func TestRoutesAcrossReplicas(t *testing.T) {
	c := newCluster(t, 3, Config{}, nil)
	var progress atomic.Int32
	cs := c.session(t, &progress)
	sid := cs.ID()
	lt, err := cs.ListTools(testkit.Ctx(t, 10*time.Second), nil)
	if err != nil || len(lt.Tools) != 2 {
		t.Fatalf("list: %v %v", lt, err)
	}
	owner := ""
	for i := range 3 {
		text, err := callText(t, cs, "ask", false)
		if err != nil {
			t.Fatalf("ask %d: %v", i, err)
		}
		name, rest, _ := strings.Cut(text, ": ")
		if rest != "accept Ada" || (owner != "" && name != owner) {
			t.Errorf("ask %d: %q (owner %q)", i, text, owner)
		}
		owner = name
		if text, err = callText(t, cs, "steps", true); err != nil || !strings.HasSuffix(text, "done") {
			t.Errorf("steps %d: %q %v", i, text, err)
		}
	}
	// go-sdk's client may run a notification's handler after the call
	// returned: wait for them.
	waitFor(t, "9 progress notifications", func() bool { return progress.Load() == 9 })
	e, err := c.b.JetStream().KeyValue(testkit.Ctx(t, 5*time.Second), bucketName(c.b.Prefix()))
	if err != nil {
		t.Fatal(err)
	}
	if v, err := e.Get(testkit.Ctx(t, 5*time.Second), sid); err != nil || string(v.Value()) != owner {
		t.Fatalf("entry of %s: %v %v, want %s", sid, v, err, owner)
	}
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the DELETE removes the entry", func() bool {
		_, err := e.Get(context.Background(), sid)
		return errors.Is(err, jetstream.ErrKeyNotFound)
	})
	fwd, served, missing := c.counts()
	t.Logf("%d HTTP requests balanced over 3 replicas; %d forwarded to the owner %s, %d served there, %d 404", c.n.Load(), fwd, owner, served, missing)
	// Initialize, initialized, list, 6 calls, 3 elicitation answers, the
	// GET stream and the DELETE: 14 requests, a third on the owner.
	if fwd < 7 || fwd != served || missing != 0 {
		t.Errorf("forwarded %d, served %d, missing %d: want at least 7 forwarded, all served", fwd, served, missing)
	}
}

// TestOwnerGone: a request for a session whose owner is gone is answered
// 404 (whether its entry was removed or is left to its TTL), and the
// client initializes again and goes on.
func TestOwnerGone(t *testing.T) {
	cases := []struct {
		name  string
		leave bool // the owner dies without removing its entries
	}{
		{"entry removed", false},
		{"no responder", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, 2, Config{}, nil)
			cs := c.session(t, nil)
			defer cs.Close()
			text, err := callText(t, cs, "ask", false)
			if err != nil {
				t.Fatal(err)
			}
			owner, _, _ := strings.Cut(text, ": ")
			for _, rp := range c.replicas {
				if rp.name == owner {
					if tc.leave {
						rp.router.mu.Lock()
						clear(rp.router.owned) // as if killed: nothing removed
						rp.router.mu.Unlock()
					}
					c.stop(rp)
				}
			}
			_, err = callText(t, cs, "steps", false)
			if !errors.Is(err, gomcp.ErrSessionMissing) {
				t.Fatalf("a call after the owner left: %v, want ErrSessionMissing (404)", err)
			}
			if _, _, missing := c.counts(); missing == 0 {
				t.Error("no request was answered 404 by the router")
			}
			cs2 := c.session(t, nil)
			defer cs2.Close()
			if text, err := callText(t, cs2, "ask", false); err != nil || !strings.HasSuffix(text, "accept Ada") {
				t.Fatalf("after re-initializing: %q %v", text, err)
			}
		})
	}
}

// TestClientGoneCancelsAtOwner: a client that leaves a forwarded GET
// stream cancels the request at the owner.
func TestClientGoneCancelsAtOwner(t *testing.T) {
	var inFlight atomic.Int32
	local := func(int) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if req.Header.Get(sessionHeader) == "" {
				w.Header().Set(sessionHeader, "S1")
				return
			}
			inFlight.Add(1)
			defer inFlight.Add(-1)
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = fmt.Fprint(w, ": ok\n\n")
			_ = http.NewResponseController(w).Flush()
			<-req.Context().Done()
		})
	}
	c := newCluster(t, 2, Config{}, local)
	post(t, c.replicas[0].http.URL, "", "", http.StatusOK) // r0 owns S1
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.replicas[1].http.URL, nil)
	req.Header.Set(sessionHeader, "S1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if _, err := resp.Body.Read(buf); err != nil || string(buf[:4]) != ": ok" {
		t.Fatalf("the stream's first bytes: %q %v", buf, err)
	}
	if inFlight.Load() != 1 {
		t.Fatalf("%d requests in flight at the owner, want 1", inFlight.Load())
	}
	cancel()
	_ = resp.Body.Close()
	waitFor(t, "the owner's request is cancelled", func() bool { return inFlight.Load() == 0 })
	if c.replicas[0].router.served.Load() != 1 || c.replicas[1].router.forwarded.Load() != 1 {
		t.Errorf("served %d forwarded %d, want 1 and 1", c.replicas[0].router.served.Load(), c.replicas[1].router.forwarded.Load())
	}
}

// TestForwardedBodies: bodies travel whole, in chunks past the first,
// up to the body limit; past it the receiver answers 413. Responses of
// many chunks come back whole.
func TestForwardedBodies(t *testing.T) {
	local := func(int) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if req.Header.Get(sessionHeader) == "" {
				w.Header().Set(sessionHeader, "S1")
				return
			}
			b := make([]byte, 0, 1<<20)
			buf := make([]byte, 32<<10)
			for {
				n, err := req.Body.Read(buf)
				b = append(b, buf[:n]...)
				if err != nil {
					break
				}
			}
			w.Header().Set("X-Len", fmt.Sprint(len(b)))
			for i := 0; i < 3; i++ { // the body three times, in odd pieces
				for p := b; len(p) > 0; {
					k := min(len(p), 10007)
					_, _ = w.Write(p[:k])
					p = p[k:]
				}
			}
		})
	}
	c := newCluster(t, 2, Config{MaxBody: 300 << 10}, local)
	post(t, c.replicas[0].http.URL, "", "", http.StatusOK)
	cases := []struct {
		size   int
		status int
	}{
		{0, http.StatusOK},
		{100, http.StatusOK},
		{chunkSize, http.StatusOK},
		{chunkSize + 1, http.StatusOK},
		{300 << 10, http.StatusOK},
		{300<<10 + 1, http.StatusRequestEntityTooLarge},
	}
	// Headers that do not fit a NATS message beside the envelope.
	big, _ := http.NewRequest(http.MethodPost, c.replicas[1].http.URL, strings.NewReader("{}"))
	big.Header.Set(sessionHeader, "S1")
	big.Header.Set("X-Big", strings.Repeat("a", 1048500))
	if resp, err := http.DefaultClient.Do(big); err != nil || resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("headers past the NATS payload: %v %v, want 431", resp.Status, err)
	} else {
		_ = resp.Body.Close()
	}
	for _, tc := range cases {
		body := strings.Repeat("x", tc.size)
		if tc.size > 10 {
			body = fmt.Sprintf("%010d", tc.size) + body[10:]
		}
		resp := post(t, c.replicas[1].http.URL, "S1", body, tc.status)
		if tc.status == http.StatusOK && resp != strings.Repeat(body, 3) {
			t.Errorf("size %d: the response has %d bytes, want %d", tc.size, len(resp), 3*tc.size)
		}
	}
}

// TestBusyOwner: past MaxServed forwarded requests at once, the owner
// refuses with 503.
func TestBusyOwner(t *testing.T) {
	release := make(chan struct{})
	local := func(int) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if req.Header.Get(sessionHeader) == "" {
				w.Header().Set(sessionHeader, "S1")
				return
			}
			select {
			case <-release:
			case <-req.Context().Done():
			}
		})
	}
	c := newCluster(t, 2, Config{MaxServed: 1}, local)
	post(t, c.replicas[0].http.URL, "", "", http.StatusOK)
	done := make(chan struct{})
	go func() {
		defer close(done)
		post(t, c.replicas[1].http.URL, "S1", "{}", http.StatusOK)
	}()
	waitFor(t, "the first request is served", func() bool { return c.replicas[0].router.served.Load() == 1 })
	post(t, c.replicas[1].http.URL, "S1", "{}", http.StatusServiceUnavailable)
	close(release)
	<-done
}

// TestUnrecordedSessionRefused: when the bucket cannot be written, the
// initialize is answered 503 and the session it created is closed.
func TestUnrecordedSessionRefused(t *testing.T) {
	c := newCluster(t, 1, Config{}, nil)
	if err := c.b.JetStream().DeleteKeyValue(testkit.Ctx(t, 5*time.Second), bucketName(c.b.Prefix())); err != nil {
		t.Fatal(err)
	}
	cl := gomcp.NewClient(&gomcp.Implementation{Name: "route-test", Version: "1"}, nil)
	_, err := cl.Connect(testkit.Ctx(t, 10*time.Second), &gomcp.StreamableClientTransport{Endpoint: c.lb.URL, MaxRetries: -1},
		&gomcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err == nil || !strings.Contains(err.Error(), "503") && !strings.Contains(err.Error(), "Service Unavailable") {
		t.Fatalf("connect: %v, want a 503", err)
	}
	waitFor(t, "the unrecorded session is closed", func() bool {
		n := 0
		for range c.replicas[0].mcp.Sessions() {
			n++
		}
		return n == 0
	})
}

// post sends body (with the session sid, if any) and checks the status.
func post(t *testing.T, u, sid, body string, status int) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	if sid != "" {
		req.Header.Set(sessionHeader, sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return ""
	}
	defer resp.Body.Close()
	var sb strings.Builder
	buf := make([]byte, 64<<10)
	for {
		n, err := resp.Body.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if resp.StatusCode != status {
		t.Errorf("POST of %d bytes: %d %q, want %d", len(body), resp.StatusCode, sb.String()[:min(sb.Len(), 200)], status)
	}
	return sb.String()
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	testkit.WaitFor(t, 10*time.Second, what, ok)
}

// TestForwardedKeepsChecks: the owner checks a forwarded request as if it
// had reached it: a non-loopback Host sent to a loopback address (DNS
// rebinding) is refused by go-sdk at the owner, with the receiver's
// address.
func TestForwardedKeepsChecks(t *testing.T) {
	c := newCluster(t, 2, Config{}, nil)
	cs := c.session(t, nil)
	defer cs.Close()
	owner := ""
	if e, err := c.b.JetStream().KeyValue(testkit.Ctx(t, 5*time.Second), bucketName(c.b.Prefix())); err == nil {
		if v, err := e.Get(testkit.Ctx(t, 5*time.Second), cs.ID()); err == nil {
			owner = string(v.Value())
		}
	}
	var other *replica
	for _, rp := range c.replicas {
		if rp.name != owner {
			other = rp
		}
	}
	if owner == "" || other == nil {
		t.Fatalf("no owner for %s", cs.ID())
	}
	cases := []struct {
		host   string
		status int
	}{
		{"", http.StatusOK},
		{"evil.example", http.StatusForbidden},
	}
	before := other.router.forwarded.Load()
	for _, tc := range cases {
		req, _ := http.NewRequest(http.MethodPost, other.http.URL, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"ping"}`))
		if tc.host != "" {
			req.Host = tc.host
		}
		req.Header.Set(sessionHeader, cs.ID())
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("host %q: %d, want %d", tc.host, resp.StatusCode, tc.status)
		}
	}
	if got := other.router.forwarded.Load() - before; got != 2 {
		t.Errorf("%d requests forwarded, want 2", got)
	}
}
