package mcp

import (
	"context"
	"crypto"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/mcp/internal/oauth"
)

// Auth configures the MCP authorization (OAuth 2.1) of an http server
// (ServerConfig.Auth; "oauth" in .mcp.json). The zero value, and a nil
// Auth on an http server without an Authorization header, is the
// automatic login: on a 401 the Manager discovers the server's
// authorization server, registers itself (Client ID Metadata Document or
// dynamic registration) and sends the authorization URL to a person
// through Config.Elicitor. Every field is optional.
type Auth struct {
	// Disabled turns authorization off: a 401 is reported as it is.
	Disabled bool `json:"disabled,omitempty"`
	// Grant is "authorization_code" (a person logs in),
	// "client_credentials" (a service logs in as itself) or empty: the
	// client_credentials grant when a private key is set, or a client
	// secret is set and the authorization server offers client_credentials
	// but not authorization_code; otherwise the authorization code grant.
	Grant string `json:"grant,omitempty"`
	// ClientID and ClientSecret are credentials registered beforehand with
	// the authorization server (Claude Code's "clientId"); they are
	// preferred to a Client ID Metadata Document and to dynamic
	// registration. The token endpoint authentication (none,
	// client_secret_basic, client_secret_post) follows the server's
	// metadata.
	ClientID     string `json:"clientId,omitempty"`
	ClientSecret string `json:"clientSecret,omitempty"`
	// PrivateKey (PEM text) or PrivateKeyFile (a PEM file) authenticate a
	// client_credentials client with private_key_jwt (RFC 7523); SigningAlg
	// picks the algorithm (default: the first the server lists that the key
	// can make: ES256, RS256, EdDSA, ...).
	PrivateKey     string `json:"privateKey,omitempty"`
	PrivateKeyFile string `json:"privateKeyFile,omitempty"`
	SigningAlg     string `json:"signingAlg,omitempty"`
	// Scopes replace the scopes the server asks for (default: the
	// challenge's, else the server's scopes_supported, else none).
	// In JSON, a list or one space-separated string.
	Scopes []string `json:"scopes,omitempty"`
	// ClientMetadataURL is this client's Client ID Metadata Document (an
	// https URL with a path), used when the server supports it and no
	// ClientID is set.
	ClientMetadataURL string `json:"clientMetadataUrl,omitempty"`
	// CallbackPort is the port of the loopback listener that receives the
	// login's redirect on 127.0.0.1 (Claude Code's "callbackPort"; 0: one
	// listener for all servers on a port the system picks).
	CallbackPort int `json:"callbackPort,omitempty"`
	// RedirectURL, instead of a loopback listener, is where the host
	// receives the redirect: it mounts Manager.AuthCallback() there.
	RedirectURL string `json:"redirectUrl,omitempty"`
	// LoginTimeout bounds a person's login (default 5m); past it the login
	// ends as a Timeout failure.
	LoginTimeout time.Duration `json:"loginTimeout,omitempty"`
}

// UnmarshalJSON accepts scopes as a list or as a space-separated string.
func (a *Auth) UnmarshalJSON(b []byte) error {
	type plain Auth
	var aux struct {
		plain
		Scopes       json.RawMessage `json:"scopes,omitempty"`
		LoginTimeout duration        `json:"loginTimeout,omitempty"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	*a = Auth(aux.plain)
	a.LoginTimeout = time.Duration(aux.LoginTimeout)
	a.Scopes = nil
	if len(aux.Scopes) > 0 && string(aux.Scopes) != "null" {
		var s string
		if err := json.Unmarshal(aux.Scopes, &s); err == nil {
			a.Scopes = strings.Fields(s)
			return nil
		}
		if err := json.Unmarshal(aux.Scopes, &a.Scopes); err != nil {
			return fmt.Errorf("scopes must be a list of strings or a space-separated string")
		}
	}
	return nil
}

// TokenStore keeps logins (tokens and what refreshing them needs) by key,
// one key per server and user. The records are opaque bytes; Load returns
// nil and no error for a key it does not hold. NewFileTokenStore (a file
// of mode 0600) and bus/store.OpenTokens (a JetStream bucket, encrypted) are two;
// the default keeps logins in memory for the Manager's life.
type TokenStore interface {
	Load(ctx context.Context, key string) ([]byte, error)
	Save(ctx context.Context, key string, data []byte) error
	Delete(ctx context.Context, key string) error
}

// WithUser returns a context whose requests to servers use the login of
// user id: one Manager then holds logins for many users (each logs in
// once, on their first request that needs it). Without it, requests use
// the login of the context the Manager was made with, or a single shared
// one.
func WithUser(ctx context.Context, id string) context.Context { return oauth.WithUser(ctx, id) }

// AuthCallback is the handler that receives the authorization server's
// redirect for servers whose Auth.RedirectURL points at the host's own
// server; mount it at that URL's path. It answers unknown or expired
// logins with 400. New does not wait for such a server's login, so the
// handler can be mounted once New has returned.
func (m *Manager) AuthCallback() http.Handler { return m.logins }

// checkAuth validates a server's Auth.
func (sc *ServerConfig) checkAuth() error {
	a := sc.Auth
	if a == nil || a.Disabled {
		return nil
	}
	fail := func(field, msg string, args ...any) error {
		return &configError{Server: sc.Name, Field: "oauth." + field, Msg: fmt.Sprintf(msg, args...)}
	}
	if sc.Type != typeHTTP {
		return fail("", "authorization is supported for http (streamable) servers, not %s", sc.Type)
	}
	switch a.Grant {
	case "", "authorization_code", "client_credentials":
	default:
		return fail("grant", "%q is not a grant (use authorization_code or client_credentials)", a.Grant)
	}
	if a.Grant == "client_credentials" && (a.ClientID == "" || a.ClientSecret == "" && a.PrivateKey == "" && a.PrivateKeyFile == "") {
		return fail("clientId", "the client_credentials grant needs clientId and clientSecret, privateKey or privateKeyFile")
	}
	if a.PrivateKey != "" && a.PrivateKeyFile != "" {
		return fail("privateKey", "set privateKey or privateKeyFile, not both")
	}
	if a.PrivateKey != "" {
		if _, err := oauth.ParsePrivateKey([]byte(a.PrivateKey)); err != nil {
			return fail("privateKey", "%v", err)
		}
	}
	if a.CallbackPort < 0 || a.CallbackPort > 65535 {
		return fail("callbackPort", "%d is not a port", a.CallbackPort)
	}
	if a.RedirectURL != "" {
		u, err := url.Parse(a.RedirectURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fail("redirectUrl", "%q must be an absolute http(s) URL", a.RedirectURL)
		}
		if a.CallbackPort != 0 {
			return fail("callbackPort", "set callbackPort or redirectUrl, not both")
		}
	}
	if a.ClientMetadataURL != "" {
		u, err := url.Parse(a.ClientMetadataURL)
		if err != nil || u.Scheme != "https" || strings.Trim(u.Path, "/") == "" {
			return fail("clientMetadataUrl", "%q must be an https URL with a path", a.ClientMetadataURL)
		}
	}
	if a.LoginTimeout < 0 {
		return fail("loginTimeout", "must not be negative")
	}
	return nil
}

// oauthHandler returns the server's OAuth handler, or nil when the server
// does not use authorization (not http, Auth.Disabled, or an
// Authorization header configured and no Auth).
func (s *server) oauthHandler() (*oauth.Handler, error) {
	if s.cfg.Type != typeHTTP {
		return nil, nil
	}
	a := s.cfg.Auth
	if a == nil {
		for k := range s.cfg.Headers {
			if strings.EqualFold(k, "Authorization") {
				return nil, nil
			}
		}
		a = &Auth{}
	}
	if a.Disabled {
		return nil, nil
	}
	s.authOnce.Do(func() { s.auth, s.authErr = s.newOAuthHandler(a) })
	return s.auth, s.authErr
}

func (s *server) newOAuthHandler(a *Auth) (*oauth.Handler, error) {
	var key crypto.Signer
	pemData := []byte(a.PrivateKey)
	if a.PrivateKeyFile != "" {
		b, err := os.ReadFile(a.PrivateKeyFile)
		if err != nil {
			return nil, &failure.Error{Kind: failure.Config, Source: failure.SourceMCP, Name: s.cfg.Name, Op: "authorize",
				Message: "the private key file cannot be read", Err: err}
		}
		pemData = b
	}
	if len(pemData) > 0 {
		k, err := oauth.ParsePrivateKey(pemData)
		if err != nil {
			return nil, &failure.Error{Kind: failure.Config, Source: failure.SourceMCP, Name: s.cfg.Name, Op: "authorize",
				Message: "the private key is unusable: " + err.Error(), Err: err}
		}
		key = k
	}
	cfg := oauth.Config{Server: s.cfg.Name, ClientID: a.ClientID, ClientSecret: a.ClientSecret, PrivateKey: key,
		SigningAlg: a.SigningAlg, Scopes: a.Scopes, ClientMetadataURL: a.ClientMetadataURL, Grant: a.Grant,
		Logins: s.m.logins, LoginTimeout: a.LoginTimeout, Store: s.m.tokenStore(), HTTPClient: s.m.cfg.HTTPClient,
		Log: s.log.With().Str("component", "oauth").Logger()}
	port, redirect := a.CallbackPort, a.RedirectURL
	cfg.Redirect = func() (string, error) {
		if redirect != "" {
			return redirect, nil
		}
		return s.m.logins.Loopback(port)
	}
	if s.m.cfg.Elicitor != nil {
		cfg.Ask = s.askLogin
	}
	return oauth.NewHandler(cfg), nil
}

// askLogin sends the authorization URL to a person through the Elicitor
// in URL mode.
func (s *server) askLogin(ctx context.Context, user, authURL string) (oauth.Answer, error) {
	e := agent.Elicitation{Kind: agent.ElicitURL, Source: agent.Provenance{Kind: failure.SourceMCP, Name: s.cfg.Name},
		Message: fmt.Sprintf("Sign in to the MCP server %q to continue.", s.cfg.Name), URL: authURL, ID: "login-" + rand.Text()}
	if user != "" {
		e.Message = fmt.Sprintf("Sign in to the MCP server %q to continue (as %s).", s.cfg.Name, user)
	}
	if c := s.callOf(ctx); c != nil {
		e.Run, e.Call = c.Run, c.ID
		e.Source.Tool = c.Source.Tool
	}
	if s.cfg.Auth != nil && s.cfg.Auth.RedirectURL != "" {
		// The redirect reaches the host's handler (AuthCallback), which
		// the host can mount only once New has returned: New stops
		// waiting for this server, whose login goes on in the background.
		if f := s.startWait.Load(); f != nil {
			(*f)()
		}
	}
	res, err := s.m.cfg.Elicitor.Elicit(ctx, e)
	if err != nil {
		return oauth.Answer{}, err
	}
	return oauth.Answer{Accepted: res.Action == agent.ElicitAccept, Reason: res.Reason}, nil
}

// authRT puts the login of the request's user (WithUser) on requests
// made for that user.
type authRT struct {
	base http.RoundTripper
	h    *oauth.Handler
}

func (t *authRT) RoundTrip(r *http.Request) (*http.Response, error) {
	if v, ok := t.h.Header(r.Context()); ok {
		r = r.Clone(r.Context())
		if v == "" {
			r.Header.Del("Authorization")
		} else {
			r.Header.Set("Authorization", v)
		}
	}
	return t.base.RoundTrip(r)
}

// tokenStore returns Config.TokenStore, or the Manager's memory store.
func (m *Manager) tokenStore() oauth.Store {
	if m.cfg.TokenStore != nil {
		return m.cfg.TokenStore
	}
	return m.memTokens
}

// loginEnded reports whether a connection attempt failed because the
// login ended (declined, expired, refused, impossible): the server is
// then left failed, showing that error, rather than asking again in a
// loop.
func loginEnded(err error) bool {
	var fe *failure.Error
	if !errors.As(err, &fe) || fe.Op != "authorize" {
		return false
	}
	switch fe.Kind {
	case failure.Transient, failure.Unavailable, failure.Canceled:
		return false
	}
	return true
}

// authRefusedMessage says what to do about a 401 or 403 that no login
// answered.
func authRefusedMessage(sc ServerConfig) string {
	switch {
	case sc.Type == typeHTTP && sc.Auth != nil && sc.Auth.Disabled:
		return "the server refused the request (HTTP 401/403) and its OAuth login is disabled: remove \"oauth\": {\"disabled\": true} to log in, or give the credentials it expects in \"headers\""
	case sc.Type == typeHTTP && sc.Auth == nil && hasAuthHeader(sc.Headers):
		return "the server refused the Authorization header of its configuration (HTTP 401/403): fix or renew that token, or remove the header to log in with OAuth"
	case sc.Type == typeHTTP:
		return "the server refused the request (HTTP 401/403) after the login: check the login's scopes and client (\"oauth\" in its configuration)"
	default:
		return "the server refused the credentials (HTTP 401/403): check the headers of its configuration (OAuth logins are supported on http servers)"
	}
}

func hasAuthHeader(h map[string]string) bool {
	for k := range h {
		if strings.EqualFold(k, "Authorization") {
			return true
		}
	}
	return false
}

// handshakeTimer is the startup timeout of one connection attempt: it
// runs expire after timeout, unless a person is logging in to the server
// then (that wait is bounded by Auth.LoginTimeout), in which case it
// waits for the login to end.
type handshakeTimer struct {
	mu          sync.Mutex
	t           *time.Timer
	done, fired bool
}

func (s *server) handshakeTimer(timeout time.Duration, expire func()) *handshakeTimer {
	h := &handshakeTimer{}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.t = time.AfterFunc(timeout, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.done {
			return
		}
		if s.auth != nil && s.auth.LoggingIn() {
			h.t.Reset(250 * time.Millisecond)
			return
		}
		h.done, h.fired = true, true
		expire()
	})
	return h
}

// Stop stops the timer and reports whether it had not expired.
func (h *handshakeTimer) Stop() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		return !h.fired
	}
	h.done = true
	h.t.Stop()
	return true
}
