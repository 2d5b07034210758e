package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/internal/testkit"
)

// gatewayProc is a gateway process whose log lines are counted.
type gatewayProc struct {
	name string
	cmd  *exec.Cmd
	url  string
	mu   sync.Mutex
	msgs map[string]int
	done chan struct{}
}

func (g *gatewayProc) count(msg string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.msgs[msg]
}

// startGateway starts a gateway on 127.0.0.1:0 and counts the messages of
// its JSON log lines.
func startGateway(t *testing.T, name string, env []string, args ...string) *gatewayProc {
	t.Helper()
	g := &gatewayProc{name: name, msgs: map[string]int{}, done: make(chan struct{})}
	g.cmd = exec.Command(gatewayBin(t), append([]string{"mcp", "serve", "-prefix", "on", "-listen", "127.0.0.1:0"}, args...)...)
	g.cmd.Env = env
	stderr, err := g.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		defer close(g.done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			var line struct{ Addr, Path, Message string }
			if json.Unmarshal(sc.Bytes(), &line) != nil {
				continue
			}
			if line.Addr != "" {
				addr <- "http://" + line.Addr + line.Path
			}
			g.mu.Lock()
			g.msgs[line.Message]++
			g.mu.Unlock()
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	t.Cleanup(func() {
		_ = g.cmd.Process.Signal(os.Interrupt)
		select {
		case <-g.done:
		case <-time.After(15 * time.Second):
			_ = g.cmd.Process.Kill()
			<-g.done
		}
		_ = g.cmd.Wait()
	})
	select {
	case g.url = <-addr:
	case <-time.After(60 * time.Second):
		t.Fatalf("gateway %s did not start listening", name)
	}
	return g
}

// roundRobin is a load balancer without affinity: each request goes to
// the next replica in rotation (a replica taken out, as a health check
// would, is skipped). It counts the requests carrying a session id that
// reach a replica other than the session's owner.
//
// It serves its requests full duplex, as load balancers do (Envoy and
// HAProxy stream both ways; nginx reads the whole body before it sends
// the request on): by default, writing the response head makes net/http's
// HTTP/1 server drain and close the request body that httputil's
// ReverseProxy may still be reading to send on, and the proxy then cuts
// the response (golang/go#40747; TestRoundRobinKeepsStreams).
type roundRobin struct {
	gws     []*gatewayProc
	proxies []*httputil.ReverseProxy
	n       atomic.Int64
	mu      sync.Mutex
	out     map[string]bool
	owners  func(sid string) string
	crossed atomic.Int64
}

func newRoundRobin(t *testing.T, gws []*gatewayProc, owners func(string) string) (*roundRobin, *httptest.Server) {
	rr := &roundRobin{gws: gws, out: map[string]bool{}, owners: owners}
	for _, g := range gws {
		u, err := url.Parse(g.url)
		if err != nil {
			t.Fatal(err)
		}
		u.Path = ""
		rr.proxies = append(rr.proxies, httputil.NewSingleHostReverseProxy(u))
	}
	lb := httptest.NewServer(rr)
	t.Cleanup(lb.Close)
	return rr, lb
}

func (rr *roundRobin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.URL.Path = "/mcp"
	// The Transport reads the body once more after Content-Length bytes
	// (transferWriter.writeBody), which may come after the backend's
	// response head was written here: a body drained and closed by then
	// fails that read, and persistConn.writeLoop closes the connection the
	// response streams on.
	if err := http.NewResponseController(w).EnableFullDuplex(); err != nil {
		http.Error(w, "the balancer cannot serve full duplex: "+err.Error(), http.StatusInternalServerError)
		return
	}
	for range rr.gws {
		i := int(rr.n.Add(1)) % len(rr.gws)
		rr.mu.Lock()
		out := rr.out[rr.gws[i].name]
		rr.mu.Unlock()
		if out {
			continue
		}
		if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
			if o := rr.owners(sid); o != "" && o != rr.gws[i].name {
				rr.crossed.Add(1)
			}
		}
		rr.proxies[i].ServeHTTP(w, r)
		return
	}
	http.Error(w, "no replica up", http.StatusBadGateway)
}

// kill ends a replica at once (no cleanup: its session entries stay) and
// takes it out of the rotation.
func (rr *roundRobin) kill(t *testing.T, name string) {
	for _, g := range rr.gws {
		if g.name == name {
			rr.mu.Lock()
			rr.out[name] = true
			rr.mu.Unlock()
			if err := g.cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			<-g.done
		}
	}
}

// sessionClient is a 2025-11-25 go-sdk client that answers elicitations
// and counts progress notifications.
func sessionClient(t *testing.T, endpoint string, progress *atomic.Int32) *gomcp.ClientSession {
	t.Helper()
	c := gomcp.NewClient(&gomcp.Implementation{Name: "go-session-client", Version: "1"}, &gomcp.ClientOptions{
		ElicitationHandler: func(context.Context, *gomcp.ElicitRequest) (*gomcp.ElicitResult, error) {
			return &gomcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
		ProgressNotificationHandler: func(context.Context, *gomcp.ProgressNotificationClientRequest) { progress.Add(1) },
	})
	cs, err := c.Connect(ctx(t, 60*time.Second), &gomcp.StreamableClientTransport{Endpoint: endpoint},
		&gomcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// elicitAndProgress calls the tool that elicits and the one that reports
// progress, and checks both.
func elicitAndProgress(t *testing.T, cs *gomcp.ClientSession, progress *atomic.Int32) {
	t.Helper()
	res, err := cs.CallTool(ctx(t, 60*time.Second), &gomcp.CallToolParams{Name: "mcp__everything__trigger-elicitation-request", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if text := resultText(res); res.IsError || !strings.Contains(text, "Name: Ada") {
		t.Errorf("elicitation: %q (error %v)", text, res.IsError)
	}
	before := progress.Load()
	p := &gomcp.CallToolParams{Name: "mcp__everything__trigger-long-running-operation", Arguments: map[string]any{"duration": 0.6, "steps": 3}}
	p.SetProgressToken("lro")
	res, err = cs.CallTool(ctx(t, 60*time.Second), p)
	if err != nil {
		t.Fatal(err)
	}
	if text := resultText(res); res.IsError || !strings.Contains(text, "completed") {
		t.Errorf("long-running operation: %q (error %v)", text, res.IsError)
	}
	// The gateway loses server-everything's last notification now and
	// then, on one replica too (it races the call's result through
	// mcp/server); the others must all arrive.
	testkit.WaitFor(t, 20*time.Second, "two progress notifications", func() bool { return progress.Load()-before >= 2 })
	if got := progress.Load() - before; got < 2 || got > 3 {
		t.Errorf("%d progress notifications, want 2 or 3", got)
	}
}

func resultText(res *gomcp.CallToolResult) string {
	var sb strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*gomcp.TextContent); ok {
			sb.WriteString(tc.Text + "\n")
		}
	}
	return sb.String()
}

// tsSession is the TypeScript SDK client of mcp-session-client.mjs.
type tsSession struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines *bufio.Scanner
}

type tsReport struct {
	Phase, Session, Elicited, Error, LostDetail string
	Tools, Progress, Answered, LostStatus       int
}

func (s *tsSession) next(t *testing.T) tsReport {
	t.Helper()
	if !s.lines.Scan() {
		t.Fatalf("the TS client ended: %v", s.lines.Err())
	}
	var r tsReport
	if err := json.Unmarshal(s.lines.Bytes(), &r); err != nil {
		t.Fatalf("TS client: %v: %s", err, s.lines.Bytes())
	}
	if r.Error != "" {
		t.Fatalf("TS client: %s", r.Error)
	}
	return r
}

// TestReplicaSessions: three stateful gateway processes sharing a NATS
// server behind a round-robin balancer without affinity. A 2025-11-25
// go-sdk client and the TypeScript SDK's client initialize, list, call a
// tool that elicits (the client answers) and one that reports progress,
// their requests landing on the replicas in turn: all succeed, the
// requests for a session that reached another replica were forwarded to
// its owner (counted by the balancer and in the replicas' logs). Then each
// session's owner is killed: the client's next request gets 404, it
// initializes again and goes on.
func TestReplicaSessions(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three gateways")
	}
	b, err := bus.New(context.Background(), bus.Config{Listen: "127.0.0.1:0", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	env := gatewayEnv(t)
	var gws []*gatewayProc
	for _, name := range []string{"g0", "g1", "g2"} {
		gws = append(gws, startGateway(t, name, env, append(gatewayArgs, "-nats", b.ClientURL(), "-replica", name, "-log-level", "debug")...))
	}
	kv, err := b.JetStream().KeyValue(ctx(t, 10*time.Second), "SWITCHBOARD_MCP_SESSIONS")
	if err != nil {
		t.Fatal(err)
	}
	owner := func(sid string) string {
		e, err := kv.Get(context.Background(), sid)
		if err != nil {
			return ""
		}
		return string(e.Value())
	}
	rr, lb := newRoundRobin(t, gws, owner)

	var progress atomic.Int32
	cs := sessionClient(t, lb.URL, &progress)
	defer func() { _ = cs.Close() }()
	lt, err := cs.ListTools(ctx(t, 30*time.Second), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !hasTool(lt, "mcp__everything__trigger-elicitation-request") || !hasTool(lt, "mcp__everything__trigger-long-running-operation") {
		t.Fatalf("the tools that elicit and report progress are not listed (%d tools)", len(lt.Tools))
	}
	elicitAndProgress(t, cs, &progress)

	nm := testkit.NodeModules(t)
	ts := &tsSession{cmd: exec.CommandContext(ctx(t, 120*time.Second), testkit.Node22(t), filepath.Join(filepath.Dir(nm), "mcp-session-client.mjs"), lb.URL)}
	ts.cmd.Env, ts.cmd.Stderr = env, os.Stderr
	if ts.stdin, err = ts.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := ts.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	ts.lines = bufio.NewScanner(stdout)
	if err := ts.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ts.stdin.Close(); _ = ts.cmd.Wait() }()
	// 2 or 3 progress notifications, as for the go client.
	ready := ts.next(t)
	if ready.Phase != "ready" || !strings.Contains(ready.Elicited, "Name: Ada") || ready.Progress < 2 || ready.Progress > 3 || ready.Answered != 1 {
		t.Errorf("TS client, phase 1: %+v", ready)
	}
	crossed := rr.crossed.Load()
	var fwd, served int64
	testkit.WaitFor(t, 20*time.Second, "the forwarding log lines (they come through pipes)", func() bool {
		fwd, served = logCount(gws, "forwarding a request to its session's owner"), logCount(gws, "serving a request forwarded to this session's owner")
		return fwd >= crossed && served >= crossed
	})
	t.Logf("phase 1: %d HTTP requests balanced over 3 replicas; %d for a session reached a replica not its owner; the replicas forwarded %d and served %d forwarded", rr.n.Load(), crossed, fwd, served)
	// Each client sends 6 requests with its session id (initialized, the
	// GET stream, list, 2 calls, the elicitation's answer); in a rotation
	// of 3, at most 2 reach the owner.
	if crossed < 8 || fwd != crossed || served != crossed {
		t.Errorf("crossed %d, forwarded %d, served %d: want at least 8, all forwarded and served", crossed, fwd, served)
	}

	// The go client's owner is killed: 404, initialize again, go on.
	goOwner := owner(cs.ID())
	rr.kill(t, goOwner)
	_, err = cs.ListTools(ctx(t, 30*time.Second), nil)
	if !errors.Is(err, gomcp.ErrSessionMissing) {
		t.Fatalf("a request after the owner %s was killed: %v, want ErrSessionMissing (404)", goOwner, err)
	}
	_ = cs.Close()
	cs = sessionClient(t, lb.URL, &progress)
	elicitAndProgress(t, cs, &progress)

	// The TS client's owner is killed (unless it was the same).
	tsOwner := owner(ready.Session)
	if tsOwner != goOwner {
		rr.kill(t, tsOwner)
	}
	if _, err := fmt.Fprintln(ts.stdin, "go"); err != nil {
		t.Fatal(err)
	}
	done := ts.next(t)
	if done.LostStatus != http.StatusNotFound || done.Session == "" || done.Session == ready.Session ||
		!strings.Contains(done.Elicited, "Name: Ada") || done.Progress < 2 || done.Progress > 3 {
		t.Errorf("TS client, after its owner %s was killed: %+v", tsOwner, done)
	}
	missing := logCount(gws, "the owner of a session is gone: 404, the client initializes again")
	t.Logf("owners killed: %s (go client), %s (TS client); %d requests answered 404 for a gone owner; both clients initialized again and went on", goOwner, tsOwner, missing)
	if missing < 2 {
		t.Errorf("%d requests answered 404 for a gone owner, want at least 2", missing)
	}
}

func hasTool(lt *gomcp.ListToolsResult, name string) bool {
	for _, tl := range lt.Tools {
		if tl.Name == name {
			return true
		}
	}
	return false
}

func logCount(gws []*gatewayProc, msg string) int64 {
	n := 0
	for _, g := range gws {
		n += g.count(msg)
	}
	return int64(n)
}
