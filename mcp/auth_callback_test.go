package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/internal/testkit/authserver"
)

// TestAuthHostCallback (issue 18, item 5): a backend service receives the
// login's redirect on its own HTTP server, at its redirectUrl, through
// Manager.AuthCallback(), mounted once New has returned. The authorization
// URL carries that redirect, New does not wait for that login (it would
// wait for the whole LoginTimeout, then leave the server failed), the
// login completes through the host's handler, and a redirect with an
// unknown state is refused there.
func TestAuthHostCallback(t *testing.T) {
	as := protected(t, authserver.Options{})
	var mgr atomic.Pointer[Manager]
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m := mgr.Load(); m != nil && r.URL.Path == "/callback" {
			m.AuthCallback().ServeHTTP(w, r)
			return
		}
		http.Error(w, "not mounted", http.StatusServiceUnavailable)
	}))
	defer host.Close()
	redirect := host.URL + "/callback" // the test server's public client takes http://127.0.0.1:<any port>/callback
	b := &browser{mode: "slow"}        // the person follows the URL a second later
	cfg := authConfig(as, &Auth{ClientID: authserver.PublicClient, RedirectURL: redirect, LoginTimeout: 20 * time.Second}, b, nil)
	// New does not wait for a login whose redirect goes to the host (it
	// could not complete before the host mounts the handler New's Manager
	// gives): it returns at once, and the login goes on in the background.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	t0 := time.Now()
	m, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	if took := time.Since(t0); took > 5*time.Second {
		t.Errorf("New took %s: it waited for a login only the host's handler can receive", took)
	}
	mgr.Store(m)
	echo(t, testkit.Ctx(t, 30*time.Second), m)
	if n := b.asked.Load(); n != 1 {
		t.Fatalf("asked %d times, want 1", n)
	}
	u, err := url.Parse(b.seen[0].URL)
	if err != nil || u.Query().Get("redirect_uri") != redirect {
		t.Errorf("the authorization URL's redirect_uri is %q, want the host's %q", u.Query().Get("redirect_uri"), redirect)
	}
	if as.Logins("") != 1 {
		t.Errorf("logins %d, want 1", as.Logins(""))
	}
	resp, err := http.Get(redirect + "?code=forged&state=nobody")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a redirect with an unknown state answered %d, want 400", resp.StatusCode)
	}
}
