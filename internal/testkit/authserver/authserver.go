// Package authserver is a real OAuth 2.1 authorization server for tests
// (github.com/ory/fosite: authorization code with PKCE, refresh tokens,
// client_credentials, revocation and introspection) and an MCP resource
// server in front of a go-sdk MCP handler that checks its tokens. It
// lives apart from internal/testkit so that only the tests that need it
// link fosite.
package authserver

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ory/fosite"
	"github.com/ory/fosite/compose"
	"github.com/ory/fosite/storage"
	"golang.org/x/crypto/bcrypt"
)

// Client ids and the confidential client's secret.
const (
	PublicClient  = "switchboard-cli"
	ServiceClient = "switchboard-service"
	ServiceSecret = "service-s3cret"
)

// Server is an authorization server and an MCP resource server.
type Server struct {
	AS  *httptest.Server // the authorization server
	RS  *httptest.Server // the MCP server: its endpoint is RS.URL + "/mcp"
	fos fosite.OAuth2Provider

	mu       sync.Mutex
	required []string // scopes every MCP request needs
	grants   map[string]int
	logins   map[string]int // authorization requests by user
	bearers  []string       // access tokens the MCP server accepted
}

// Options tune New.
type Options struct {
	// AccessTokenLifespan (default 1h).
	AccessTokenLifespan time.Duration
	// Required scopes of MCP requests at first (default "read").
	Required []string
}

// New starts both servers in front of mcpHandler; they stop with the test.
func New(t testing.TB, mcpHandler http.Handler, o Options) *Server {
	t.Helper()
	s, err := Start(mcpHandler, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// Start starts both servers in front of mcpHandler (for examples; tests
// use New). Close stops them.
func Start(mcpHandler http.Handler, o Options) (*Server, error) {
	if o.AccessTokenLifespan == 0 {
		o.AccessTokenLifespan = time.Hour
	}
	if o.Required == nil {
		o.Required = []string{"read"}
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	secret, err := bcrypt.GenerateFromPassword([]byte(ServiceSecret), bcrypt.MinCost)
	if err != nil {
		return nil, err
	}
	s := &Server{required: o.Required, grants: map[string]int{}, logins: map[string]int{}}
	store := storage.NewMemoryStore()
	scopes := []string{"read", "write", "offline_access"}
	store.Clients[PublicClient] = &fosite.DefaultClient{ID: PublicClient, Public: true,
		RedirectURIs: []string{"http://127.0.0.1/callback"}, ResponseTypes: []string{"code"}, GrantTypes: []string{"authorization_code", "refresh_token"}, Scopes: scopes}
	store.Clients[ServiceClient] = &fosite.DefaultClient{ID: ServiceClient, Secret: secret,
		GrantTypes: []string{"client_credentials"}, Scopes: scopes}
	cfg := &fosite.Config{AccessTokenLifespan: o.AccessTokenLifespan, RefreshTokenLifespan: time.Hour,
		AuthorizeCodeLifespan: time.Minute, GlobalSecret: []byte("some-cool-secret-that-is-32bytes"), EnforcePKCE: true,
		EnforcePKCEForPublicClients: true, EnablePKCEPlainChallengeMethod: false, ScopeStrategy: fosite.ExactScopeStrategy,
		AudienceMatchingStrategy: fosite.DefaultAudienceMatchingStrategy, SendDebugMessagesToClients: true}
	s.fos = compose.ComposeAllEnabled(cfg, store, key)
	s.AS = httptest.NewServer(http.HandlerFunc(s.serveAS))
	s.RS = httptest.NewServer(s.resource(mcpHandler))
	return s, nil
}

// Close stops both servers.
func (s *Server) Close() {
	s.RS.Close()
	s.AS.Close()
}

// Endpoint is the MCP server's URL.
func (s *Server) Endpoint() string { return s.RS.URL + "/mcp" }

// Require sets the scopes every MCP request needs from now on.
func (s *Server) Require(scopes ...string) {
	s.mu.Lock()
	s.required = scopes
	s.mu.Unlock()
}

// Grants returns how many token requests of a grant type succeeded.
func (s *Server) Grants(grantType string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.grants[grantType]
}

// Logins returns how many authorization requests a user made.
func (s *Server) Logins(user string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logins[user]
}

// Bearers returns the access tokens the MCP server accepted, in order.
func (s *Server) Bearers() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.bearers)
}

// Revoke revokes a token (and, for a refresh token, its access tokens),
// as the authorization server's revocation endpoint does.
func (s *Server) Revoke(t testing.TB, token, clientID string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.AS.URL+"/revoke", strings.NewReader("token="+token+"&client_id="+clientID))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("revoke: %s", resp.Status)
	}
}

func (s *Server) serveAS(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		writeJSON(w, map[string]any{"issuer": s.AS.URL, "authorization_endpoint": s.AS.URL + "/authorize",
			"token_endpoint": s.AS.URL + "/token", "revocation_endpoint": s.AS.URL + "/revoke",
			"scopes_supported": []string{"read", "write", "offline_access"}, "response_types_supported": []string{"code"},
			"grant_types_supported":                 []string{"authorization_code", "refresh_token", "client_credentials"},
			"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "none"},
			"code_challenge_methods_supported":      []string{"S256"}})
	case "/authorize":
		// The person: whoever follows the URL is logged in as ?user=.
		user := r.URL.Query().Get("user")
		ar, err := s.fos.NewAuthorizeRequest(ctx, r)
		if err != nil {
			s.fos.WriteAuthorizeError(ctx, w, ar, err)
			return
		}
		if r.URL.Query().Get("deny") != "" {
			s.fos.WriteAuthorizeError(ctx, w, ar, fosite.ErrAccessDenied)
			return
		}
		for _, sc := range ar.GetRequestedScopes() {
			ar.GrantScope(sc)
		}
		s.mu.Lock()
		s.logins[user]++
		s.mu.Unlock()
		resp, err := s.fos.NewAuthorizeResponse(ctx, ar, &fosite.DefaultSession{Subject: user})
		if err != nil {
			s.fos.WriteAuthorizeError(ctx, w, ar, err)
			return
		}
		s.fos.WriteAuthorizeResponse(ctx, w, ar, resp)
	case "/token":
		ar, err := s.fos.NewAccessRequest(ctx, r, &fosite.DefaultSession{})
		if err != nil {
			s.fos.WriteAccessError(ctx, w, ar, err)
			return
		}
		if ar.GetGrantTypes().ExactOne("client_credentials") {
			for _, sc := range ar.GetRequestedScopes() {
				ar.GrantScope(sc)
			}
		}
		resp, err := s.fos.NewAccessResponse(ctx, ar)
		if err != nil {
			s.fos.WriteAccessError(ctx, w, ar, err)
			return
		}
		s.mu.Lock()
		s.grants[ar.GetGrantTypes()[0]]++
		s.mu.Unlock()
		s.fos.WriteAccessResponse(ctx, w, ar, resp)
	case "/revoke":
		s.fos.WriteRevocationResponse(ctx, w, s.fos.NewRevocationRequest(ctx, r))
	default:
		http.NotFound(w, r)
	}
}

// resource serves the protected resource metadata and checks every MCP
// request's bearer token by introspection: 401 without a valid token, 403
// insufficient_scope without the required scopes.
func (s *Server) resource(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		prm := s.RS.URL + "/.well-known/oauth-protected-resource/mcp"
		if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
			writeJSON(w, map[string]any{"resource": s.Endpoint(), "authorization_servers": []string{s.AS.URL},
				"scopes_supported": []string{"read"}})
			return
		}
		s.mu.Lock()
		required := slices.Clone(s.required)
		s.mu.Unlock()
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || tok == "" {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata=%q`, prm))
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		_, _, err := s.fos.IntrospectToken(r.Context(), tok, fosite.AccessToken, &fosite.DefaultSession{}, required...)
		switch {
		case errors.Is(err, fosite.ErrInvalidScope):
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q, resource_metadata=%q`,
				strings.Join(required, " "), prm))
			http.Error(w, "insufficient scope", http.StatusForbidden)
			return
		case err != nil:
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="invalid_token", resource_metadata=%q`, prm))
			http.Error(w, "invalid token", http.StatusUnauthorized)
			return
		}
		s.mu.Lock()
		if n := len(s.bearers); n == 0 || s.bearers[n-1] != tok {
			s.bearers = append(s.bearers, tok)
		}
		s.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
