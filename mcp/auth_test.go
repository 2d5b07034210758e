package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/internal/testkit/authserver"
)

// browser is an Elicitor standing in for a person with a browser: it
// follows the authorization URL (logging in as the user the question
// names) so that the redirect reaches the Manager's listener, or declines,
// or never answers.
type browser struct {
	mode  string // "visit" (default), "slow" (visit after 1s), "decline", "hang", "deny"
	asked atomic.Int32
	mu    sync.Mutex
	seen  []agent.Elicitation
}

func (b *browser) Elicit(ctx context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
	b.asked.Add(1)
	b.mu.Lock()
	b.seen = append(b.seen, e)
	b.mu.Unlock()
	if e.Kind != agent.ElicitURL {
		return agent.ElicitationResult{Action: agent.ElicitDecline}, nil
	}
	switch b.mode {
	case "decline":
		return agent.ElicitationResult{Action: agent.ElicitDecline, Reason: "not now"}, nil
	case "hang":
		<-ctx.Done()
		return agent.ElicitationResult{}, ctx.Err()
	case "slow":
		time.Sleep(time.Second)
	}
	user := ""
	if _, rest, ok := strings.Cut(e.Message, "(as "); ok {
		user = strings.TrimSuffix(rest, ").")
	}
	u := e.URL + "&user=" + url.QueryEscape(user)
	if b.mode == "deny" {
		u += "&deny=1"
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return agent.ElicitationResult{}, err
	}
	resp.Body.Close()
	return agent.ElicitationResult{Action: agent.ElicitAccept}, nil
}

// mapStore is a TokenStore tests can read.
type mapStore struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (s *mapStore) Load(_ context.Context, k string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[k], nil
}
func (s *mapStore) Save(_ context.Context, k string, d []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string][]byte{}
	}
	s.m[k] = d
	return nil
}
func (s *mapStore) Delete(_ context.Context, k string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, k)
	return nil
}

// refreshToken returns the refresh token stored for key.
func (s *mapStore) refreshToken(t *testing.T, key string) string {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var rec struct {
		Token struct {
			RefreshToken string `json:"refresh_token"`
		} `json:"token"`
	}
	if err := json.Unmarshal(s.m[key], &rec); err != nil || rec.Token.RefreshToken == "" {
		t.Fatalf("no refresh token stored under %q (%v): %s", key, err, s.m[key])
	}
	return rec.Token.RefreshToken
}

func protected(t *testing.T, o authserver.Options) *authserver.Server {
	srv := goServer()
	return authserver.New(t, gomcp.NewStreamableHTTPHandler(func(*http.Request) *gomcp.Server { return srv }, nil), o)
}

func authConfig(as *authserver.Server, a *Auth, el agent.Elicitor, store TokenStore) Config {
	cfg := quickConfig(ServerConfig{Name: "api", URL: as.Endpoint(), Auth: a})
	cfg.Elicitor, cfg.TokenStore, cfg.KeepAlive = el, store, -1
	return cfg
}

func echo(t *testing.T, ctx context.Context, m *Manager) {
	t.Helper()
	res, err := m.CallTool(ctx, "api", "echo", json.RawMessage(`{"text":"hi"}`))
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	if res.IsError {
		t.Fatalf("call: tool error %+v", res)
	}
}

// TestAuthLoginRefresh: the person path logs in once (PKCE through the
// loopback listener); the token is refreshed before it expires, without
// asking again.
func TestAuthLoginRefresh(t *testing.T) {
	as := protected(t, authserver.Options{AccessTokenLifespan: 2 * time.Second})
	b := &browser{}
	m := newManager(t, authConfig(as, &Auth{ClientID: authserver.PublicClient}, b, nil))
	ctx := testkit.Ctx(t, 30*time.Second)
	echo(t, ctx, m)
	if n := b.asked.Load(); n != 1 {
		t.Fatalf("asked %d times, want 1", n)
	}
	if e := b.seen[0]; e.Kind != agent.ElicitURL || e.Source.Name != "api" || !strings.Contains(e.URL, "code_challenge_method=S256") {
		t.Fatalf("elicitation %+v", e)
	}
	time.Sleep(1700 * time.Millisecond) // within a quarter of the lifespan of expiry
	echo(t, ctx, m)
	if got := as.Grants("refresh_token"); got != 1 {
		t.Errorf("refresh grants %d, want 1", got)
	}
	if n := b.asked.Load(); n != 1 {
		t.Errorf("asked %d times after the refresh, want 1", n)
	}
	if bs := as.Bearers(); len(bs) < 2 || bs[0] == bs[len(bs)-1] {
		t.Errorf("the server saw %d distinct tokens, want the refreshed one too", len(bs))
	}
}

// TestAuthRevokedRefresh: a refresh token revoked at the authorization
// server leads back to the person path.
func TestAuthRevokedRefresh(t *testing.T) {
	as := protected(t, authserver.Options{AccessTokenLifespan: 1500 * time.Millisecond})
	b, store := &browser{}, &mapStore{}
	m := newManager(t, authConfig(as, &Auth{ClientID: authserver.PublicClient}, b, store))
	ctx := testkit.Ctx(t, 30*time.Second)
	echo(t, ctx, m)
	as.Revoke(t, store.refreshToken(t, "api.u"), authserver.PublicClient)
	// The access token expires (1.5 s lifespan). Its age on the wall clock
	// is the subject, across a real HTTP authorization server: no bubble.
	time.Sleep(1600 * time.Millisecond)
	echo(t, ctx, m)
	if n := b.asked.Load(); n != 2 {
		t.Errorf("asked %d times, want 2 (the revoked refresh token needs a new login)", n)
	}
	if as.Grants("refresh_token") != 0 || as.Logins("") != 2 {
		t.Errorf("refresh grants %d, logins %d", as.Grants("refresh_token"), as.Logins(""))
	}
}

// TestAuthStepUp: insufficient_scope asks the person again for the
// union of the scopes, and the call then succeeds.
func TestAuthStepUp(t *testing.T) {
	as := protected(t, authserver.Options{Required: []string{"read"}})
	b := &browser{}
	m := newManager(t, authConfig(as, &Auth{ClientID: authserver.PublicClient}, b, nil))
	ctx := testkit.Ctx(t, 30*time.Second)
	echo(t, ctx, m)
	as.Require("read", "write")
	echo(t, ctx, m)
	if n := b.asked.Load(); n != 2 {
		t.Fatalf("asked %d times, want 2", n)
	}
	u, _ := url.Parse(b.seen[1].URL)
	if sc := strings.Fields(u.Query().Get("scope")); !containsAll(sc, "read", "write") {
		t.Errorf("step-up scopes %v, want read and write", sc)
	}
}

func containsAll(have []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}

// TestAuthClientCredentials: a service logs in as itself, no person.
func TestAuthClientCredentials(t *testing.T) {
	as := protected(t, authserver.Options{})
	m := newManager(t, authConfig(as, &Auth{Grant: "client_credentials", ClientID: authserver.ServiceClient, ClientSecret: authserver.ServiceSecret}, nil, nil))
	echo(t, testkit.Ctx(t, 30*time.Second), m)
	if as.Grants("client_credentials") != 1 || as.Grants("authorization_code") != 0 {
		t.Errorf("grants: client_credentials %d, authorization_code %d", as.Grants("client_credentials"), as.Grants("authorization_code"))
	}
}

// TestAuthLoginEnds: a declined, expired or refused login leaves the
// server failed with Declined or Timeout, asked once, not in a loop.
func TestAuthLoginEnds(t *testing.T) {
	tests := []struct {
		mode string
		want failure.Kind
	}{
		{"decline", failure.Declined},
		{"hang", failure.Timeout},
		{"deny", failure.Declined},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			as := protected(t, authserver.Options{})
			b := &browser{mode: tt.mode}
			m := newManager(t, authConfig(as, &Auth{ClientID: authserver.PublicClient, LoginTimeout: 300 * time.Millisecond}, b, nil))
			st := m.Status()[0]
			if st.State != stateFailed || !errors.Is(st.Err, tt.want) {
				t.Fatalf("status %s, %v; want failed with %v", st.State, st.Err, tt.want)
			}
			time.Sleep(300 * time.Millisecond) // several restart backoffs
			if n := b.asked.Load(); n != 1 {
				t.Errorf("asked %d times, want 1", n)
			}
		})
	}
}

// TestAuthPerUser: one Manager holds a login per user of the context.
func TestAuthPerUser(t *testing.T) {
	as := protected(t, authserver.Options{})
	b := &browser{}
	m := newManager(t, authConfig(as, &Auth{ClientID: authserver.PublicClient}, b, nil))
	ctx := testkit.Ctx(t, 30*time.Second)
	for _, u := range []string{"alice", "bob", "alice"} {
		echo(t, WithUser(ctx, u), m)
	}
	if as.Logins("alice") != 1 || as.Logins("bob") != 1 || as.Logins("") != 1 {
		t.Errorf("logins: alice %d, bob %d, the connection %d; want one each", as.Logins("alice"), as.Logins("bob"), as.Logins(""))
	}
}

// TestAuthLoginOutlastsStartupTimeout: a person taking longer than the
// server's startup timeout to log in does not fail the connection (the
// login has its own bound).
func TestAuthLoginOutlastsStartupTimeout(t *testing.T) {
	as := protected(t, authserver.Options{})
	b := &browser{mode: "slow"}
	cfg := authConfig(as, &Auth{ClientID: authserver.PublicClient}, b, nil)
	cfg.StartupTimeout = 400 * time.Millisecond
	m := newManager(t, cfg)
	if st := m.Status()[0]; st.State != stateReady {
		t.Fatalf("status %s, %v", st.State, st.Err)
	}
	echo(t, testkit.Ctx(t, 10*time.Second), m)
}
