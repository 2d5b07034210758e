package main

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/ory/fosite"
	"github.com/ory/fosite/compose"
	"github.com/ory/fosite/storage"
)

// clientID is the public OAuth client the Manager logs in as (PKCE, no
// secret; its redirect is the Manager's loopback listener).
const clientID = "switchboard-cli"

// authServer is a small but real OAuth 2.1 authorization server
// (github.com/ory/fosite: authorization code with PKCE, refresh tokens) and
// an MCP resource server in front of an MCP handler that checks its
// tokens, both on loopback ports. A real deployment has its own
// authorization server; this one makes the example self-contained.
type authServer struct {
	as, rs *httptest.Server
	fos    fosite.OAuth2Provider

	mu     sync.Mutex
	grants map[string]int // successful token requests by grant type
}

// startAuthServer starts both servers in front of mcpHandler.
func startAuthServer(mcpHandler http.Handler) (*authServer, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	store := storage.NewMemoryStore()
	store.Clients[clientID] = &fosite.DefaultClient{ID: clientID, Public: true,
		RedirectURIs: []string{"http://127.0.0.1/callback"}, ResponseTypes: []string{"code"},
		GrantTypes: []string{"authorization_code", "refresh_token"}, Scopes: []string{"read", "offline_access"}}
	cfg := &fosite.Config{AccessTokenLifespan: time.Hour, RefreshTokenLifespan: time.Hour, AuthorizeCodeLifespan: time.Minute,
		GlobalSecret: []byte("an-example-secret-of-32-bytes!!!"), EnforcePKCE: true, EnforcePKCEForPublicClients: true,
		ScopeStrategy: fosite.ExactScopeStrategy, AudienceMatchingStrategy: fosite.DefaultAudienceMatchingStrategy}
	s := &authServer{fos: compose.ComposeAllEnabled(cfg, store, key), grants: map[string]int{}}
	s.as = httptest.NewServer(http.HandlerFunc(s.serveAS))
	s.rs = httptest.NewServer(s.resource(mcpHandler))
	return s, nil
}

// Close stops both servers.
func (s *authServer) Close() {
	s.rs.Close()
	s.as.Close()
}

// Endpoint is the MCP server's URL.
func (s *authServer) Endpoint() string { return s.rs.URL + "/mcp" }

// Grants returns how many token requests of a grant type succeeded.
func (s *authServer) Grants(grantType string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.grants[grantType]
}

// serveAS is the authorization server: its metadata (RFC 8414), the
// authorization endpoint (whoever follows the URL is logged in as ?user=
// and consents to every scope asked) and the token endpoint.
func (s *authServer) serveAS(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		writeJSON(w, map[string]any{"issuer": s.as.URL, "authorization_endpoint": s.as.URL + "/authorize",
			"token_endpoint": s.as.URL + "/token", "scopes_supported": []string{"read", "offline_access"},
			"response_types_supported": []string{"code"}, "grant_types_supported": []string{"authorization_code", "refresh_token"},
			"token_endpoint_auth_methods_supported": []string{"none"}, "code_challenge_methods_supported": []string{"S256"}})
	case "/authorize":
		ar, err := s.fos.NewAuthorizeRequest(ctx, r)
		if err != nil {
			s.fos.WriteAuthorizeError(ctx, w, ar, err)
			return
		}
		for _, sc := range ar.GetRequestedScopes() {
			ar.GrantScope(sc)
		}
		resp, err := s.fos.NewAuthorizeResponse(ctx, ar, &fosite.DefaultSession{Subject: r.URL.Query().Get("user")})
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
		resp, err := s.fos.NewAccessResponse(ctx, ar)
		if err != nil {
			s.fos.WriteAccessError(ctx, w, ar, err)
			return
		}
		s.mu.Lock()
		s.grants[ar.GetGrantTypes()[0]]++
		s.mu.Unlock()
		s.fos.WriteAccessResponse(ctx, w, ar, resp)
	default:
		http.NotFound(w, r)
	}
}

// resource serves the protected resource metadata (RFC 9728) and checks
// every MCP request's bearer token: 401 with the metadata's URL without a
// valid token carrying the scope "read".
func (s *authServer) resource(next http.Handler) http.Handler {
	const prmPath = "/.well-known/oauth-protected-resource/mcp"
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == prmPath {
			writeJSON(w, map[string]any{"resource": s.Endpoint(), "authorization_servers": []string{s.as.URL},
				"scopes_supported": []string{"read"}})
			return
		}
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if ok && tok != "" {
			_, _, err := s.fos.IntrospectToken(r.Context(), tok, fosite.AccessToken, &fosite.DefaultSession{}, "read")
			ok = err == nil
		}
		if !ok {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="invalid_token", resource_metadata=%q`, s.rs.URL+prmPath))
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
