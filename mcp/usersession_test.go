package mcp

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/internal/testkit/authserver"
)

// binder is an MCP server that binds each session to the subject of the
// token that opened it (as the MCP authorization spec says servers
// should) and answers 404 to a request on it with another subject's
// token, or on a session it expired.
type binder struct {
	as      *authserver.Server
	next    http.Handler
	refused atomic.Int32
	mu      sync.Mutex
	owner   map[string]string   // session id -> subject
	opened  map[string][]string // subject -> session ids, in order
	deleted map[string]bool     // session ids the client closed (DELETE)
	expired map[string]bool
	waiting chan struct{} // a wait call started
	release chan struct{} // closed: wait calls end now
}

func bindingServer(t *testing.T) *binder {
	srv := goServer()
	waiting, release := make(chan struct{}, 8), make(chan struct{})
	gomcp.AddTool(srv, &gomcp.Tool{Name: "wait", Description: "Wait ms milliseconds, or until released."},
		func(ctx context.Context, _ *gomcp.CallToolRequest, in struct{ Ms int }) (*gomcp.CallToolResult, any, error) {
			select {
			case waiting <- struct{}{}:
			default:
			}
			select {
			case <-release:
			case <-time.After(time.Duration(in.Ms) * time.Millisecond):
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: "done"}}}, nil, nil
		})
	gomcp.AddTool(srv, &gomcp.Tool{Name: "ask", Description: "Ask the user a question."},
		func(ctx context.Context, req *gomcp.CallToolRequest, _ struct{}) (*gomcp.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &gomcp.ElicitParams{Message: "Proceed?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}})
			if err != nil {
				return nil, nil, err
			}
			return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: res.Action}}}, nil, nil
		})
	b := &binder{next: gomcp.NewStreamableHTTPHandler(func(*http.Request) *gomcp.Server { return srv }, nil),
		owner: map[string]string{}, opened: map[string][]string{}, deleted: map[string]bool{}, expired: map[string]bool{},
		waiting: waiting, release: release}
	b.as = authserver.New(t, b, authserver.Options{})
	return b
}

func (b *binder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sub, err := b.as.Subject(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	sid := r.Header.Get("Mcp-Session-Id")
	if sid == "" {
		b.next.ServeHTTP(&bindWriter{ResponseWriter: w, b: b, sub: sub}, r)
		return
	}
	b.mu.Lock()
	own, known := b.owner[sid]
	gone := b.expired[sid]
	if r.Method == http.MethodDelete && known && own == sub {
		b.deleted[sid] = true
	}
	b.mu.Unlock()
	if gone || known && own != sub {
		b.refused.Add(1)
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	b.next.ServeHTTP(w, r)
}

// sessions returns the session ids opened for user.
func (b *binder) sessions(user string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.opened[user])
}

func (b *binder) closed(sid string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.deleted[sid]
}

// expire ends the session on the server's side (as its session timeout
// would): the server answers 404 to it from then on.
func (b *binder) expire(t *testing.T, sid string) {
	b.mu.Lock()
	b.expired[sid] = true
	b.mu.Unlock()
	r := httptest.NewRequest(http.MethodDelete, "/mcp", nil)
	r.Header.Set("Mcp-Session-Id", sid)
	w := httptest.NewRecorder()
	b.next.ServeHTTP(w, r)
	if w.Code >= 300 {
		t.Fatalf("ending session %s: %d %s", sid, w.Code, w.Body)
	}
}

// bindWriter records the session id an initialize answer gives.
type bindWriter struct {
	http.ResponseWriter
	b    *binder
	sub  string
	done bool
}

func (w *bindWriter) WriteHeader(code int) {
	if !w.done {
		w.done = true
		if id := w.Header().Get("Mcp-Session-Id"); id != "" {
			w.b.mu.Lock()
			w.b.owner[id] = w.sub
			w.b.opened[w.sub] = append(w.b.opened[w.sub], id)
			w.b.mu.Unlock()
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *bindWriter) Write(p []byte) (int, error) {
	if !w.done {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(p)
}

func (w *bindWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *bindWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// userSessionManager is a Manager on a binding server; tune shortens the
// user sessions' bounds before the first call.
func userSessionManager(t *testing.T, idle time.Duration, max int) (*binder, *Manager) {
	b, m, _ := userSessionManagerBrowser(t, idle, max)
	return b, m
}

func userSessionManagerBrowser(t *testing.T, idle time.Duration, max int) (*binder, *Manager, *browser) {
	b, br := bindingServer(t), &browser{}
	m := newManager(t, authConfig(b.as, &Auth{ClientID: authserver.PublicClient}, br, nil))
	us := &m.byName["api"].users
	us.mu.Lock()
	us.idle, us.max = idle, max
	us.mu.Unlock()
	return b, m, br
}

func openUsers(m *Manager) int {
	us := &m.byName["api"].users
	us.mu.Lock()
	defer us.mu.Unlock()
	return len(us.by)
}

// TestUserSessions: against a server that binds sessions to users, each
// user of the context gets a session of their own (one Mcp-Session-Id
// each, reused), and none of their requests is refused.
func TestUserSessions(t *testing.T) {
	tests := []struct {
		name  string
		users []string
	}{
		{"alice then bob", []string{"alice", "bob"}},
		{"alice bob alice bob", []string{"alice", "bob", "alice", "bob"}},
		{"bob alone", []string{"bob", "bob", "bob"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, m := userSessionManager(t, 0, 0)
			ctx := testkit.Ctx(t, 30*time.Second)
			for _, u := range tt.users {
				echo(t, WithUser(ctx, u), m)
			}
			if n := b.refused.Load(); n != 0 {
				t.Errorf("the server refused %d requests", n)
			}
			seen := map[string]string{}
			for _, u := range append([]string{""}, tt.users...) {
				ids := b.sessions(u)
				if len(ids) != 1 {
					t.Fatalf("user %q opened sessions %v, want one", u, ids)
				}
				if other, dup := seen[ids[0]]; dup && other != u {
					t.Fatalf("users %q and %q share session %s", u, other, ids[0])
				}
				seen[ids[0]] = u
				if b.as.Logins(u) != 1 {
					t.Errorf("user %q logged in %d times, want 1", u, b.as.Logins(u))
				}
			}
			// The default user (the Manager's context) stays on the main session.
			echo(t, ctx, m)
			if ids := b.sessions(""); len(ids) != 1 {
				t.Errorf("main sessions %v, want one", ids)
			}
		})
	}
}

// TestUserSessionIdle: a user session unused past the idle bound is
// closed (the server sees its DELETE), and the next call opens another.
func TestUserSessionIdle(t *testing.T) {
	b, m := userSessionManager(t, 300*time.Millisecond, 0)
	ctx := WithUser(testkit.Ctx(t, 30*time.Second), "alice")
	echo(t, ctx, m)
	first := b.sessions("alice")[0]
	waitFor(t, "the idle session's close", func() bool { return b.closed(first) && openUsers(m) == 0 })
	echo(t, ctx, m)
	if ids := b.sessions("alice"); len(ids) != 2 || ids[1] == first {
		t.Fatalf("alice's sessions %v, want a second one after the idle close", ids)
	}
	if b.refused.Load() != 0 {
		t.Errorf("the server refused %d requests", b.refused.Load())
	}
}

// TestUserSessionLRU: past the bound, the least recently used session is
// closed first; the others are kept and reused.
func TestUserSessionLRU(t *testing.T) {
	b, m := userSessionManager(t, 0, 2)
	ctx := testkit.Ctx(t, 30*time.Second)
	for _, u := range []string{"alice", "bob", "alice", "carol"} { // bob is the least recently used
		echo(t, WithUser(ctx, u), m)
	}
	bob := b.sessions("bob")[0]
	waitFor(t, "bob's session's close", func() bool { return b.closed(bob) })
	if n := openUsers(m); n != 2 {
		t.Errorf("%d user sessions open, want 2", n)
	}
	for _, u := range []string{"alice", "carol"} {
		if b.closed(b.sessions(u)[0]) {
			t.Errorf("%s's session was closed", u)
		}
	}
	echo(t, WithUser(ctx, "alice"), m)
	echo(t, WithUser(ctx, "bob"), m) // evicts carol now
	if got := fmt.Sprint(len(b.sessions("alice")), len(b.sessions("bob")), len(b.sessions("carol"))); got != "1 2 1" {
		t.Errorf("sessions opened by alice, bob, carol: %s, want 1 2 1", got)
	}
	waitFor(t, "carol's session's close", func() bool { return b.closed(b.sessions("carol")[0]) })
}

// TestUserSessionMissing: a user session the server forgot (404) is
// dropped and connected again, and the call succeeds.
func TestUserSessionMissing(t *testing.T) {
	b, m := userSessionManager(t, 0, 0)
	ctx := WithUser(testkit.Ctx(t, 30*time.Second), "bob")
	echo(t, ctx, m)
	b.expire(t, b.sessions("bob")[0])
	echo(t, ctx, m)
	if ids := b.sessions("bob"); len(ids) != 2 {
		t.Fatalf("bob's sessions %v, want a second after the first expired", ids)
	}
	echo(t, ctx, m)
	if ids := b.sessions("bob"); len(ids) != 2 {
		t.Errorf("bob's sessions %v, want the second reused", ids)
	}
}

// TestUserSessionsClose: Manager.Close closes every user session (the
// server sees each DELETE); goleak (TestMain) checks nothing is left.
func TestUserSessionsClose(t *testing.T) {
	b, m := userSessionManager(t, 0, 0)
	ctx := testkit.Ctx(t, 30*time.Second)
	users := []string{"alice", "bob", "carol"}
	for _, u := range users {
		echo(t, WithUser(ctx, u), m)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for _, u := range users {
		if sid := b.sessions(u)[0]; !b.closed(sid) {
			t.Errorf("%s's session %s was not closed", u, sid)
		}
	}
	if n := openUsers(m); n != 0 {
		t.Errorf("%d user sessions left", n)
	}
	if _, err := m.CallTool(WithUser(ctx, "dave"), "api", "echo", []byte(`{"text":"hi"}`)); err == nil {
		t.Error("a call after Close succeeded")
	}
}

// TestUserSessionBusy: a session closed with a call in flight (idle past
// the bound, or evicted by a new user) lets the call finish, then closes.
func TestUserSessionBusy(t *testing.T) {
	tests := []struct {
		name string
		idle time.Duration
		max  int
	}{
		{"idle", 150 * time.Millisecond, 0},
		{"evicted", 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, m := userSessionManager(t, tt.idle, tt.max)
			ctx := testkit.Ctx(t, 30*time.Second)
			alice := WithUser(ctx, "alice")
			echo(t, alice, m) // connects alice's session
			done := make(chan error, 1)
			go func() {
				res, err := m.CallTool(alice, "api", "wait", []byte(`{"Ms":20000}`))
				if err == nil && res.IsError {
					err = fmt.Errorf("tool error %+v", res)
				}
				done <- err
			}()
			select {
			case <-b.waiting: // alice's call is in flight
			case <-time.After(20 * time.Second):
				t.Fatal("alice's call did not reach the server")
			}
			if tt.idle > 0 {
				waitFor(t, "alice's session's idle close", func() bool { return openUsers(m) == 0 })
			}
			echo(t, WithUser(ctx, "bob"), m) // evicts alice's session when max is 1
			select {
			case <-done:
				t.Fatal("alice's call ended before her session was closed")
			default:
			}
			close(b.release) // the call finishes now
			if err := <-done; err != nil {
				t.Fatalf("alice's call in flight when her session closed: %v", err)
			}
			sid := b.sessions("alice")[0]
			waitFor(t, "alice's session's DELETE", func() bool { return b.closed(sid) })
			if len(b.sessions("alice")) != 1 {
				t.Errorf("alice's sessions %v, want one", b.sessions("alice"))
			}
			if tt.max == 1 && openUsers(m) != 1 {
				t.Errorf("%d user sessions open, want bob's only", openUsers(m))
			}
		})
	}
}

// TestUserSessionElicit: a server's elicitation on a user's session
// reaches the Manager's Elicitor, and the answer goes back on that session
// (with that user's token, which the binding server checks).
func TestUserSessionElicit(t *testing.T) {
	b, m, br := userSessionManagerBrowser(t, 0, 0)
	ctx := WithUser(testkit.Ctx(t, 30*time.Second), "bob")
	res, err := m.CallTool(ctx, "api", "ask", []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Parts) != 1 || res.Parts[0].Text != "decline" {
		t.Fatalf("result %+v, want the browser's decline", res.Parts)
	}
	br.mu.Lock()
	last := br.seen[len(br.seen)-1]
	br.mu.Unlock()
	if last.Kind != agent.ElicitForm || last.Message != "Proceed?" {
		t.Errorf("the Elicitor saw %+v, want the server's form", last)
	}
	if n := b.refused.Load(); n != 0 || len(b.sessions("bob")) != 1 {
		t.Errorf("refused %d, bob's sessions %v", n, b.sessions("bob"))
	}
}
