package oauth

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/rs/zerolog"
	"golang.org/x/oauth2"

	"github.com/switchboard-dev/switchboard/failure"
)

// Defaults.
const (
	// DefaultLoginTimeout bounds a person's login.
	DefaultLoginTimeout = 5 * time.Minute
	// tokenTimeout bounds one token request (refresh, client_credentials).
	tokenTimeout = 30 * time.Second
	// storeTimeout bounds one Store operation.
	storeTimeout = 10 * time.Second
	// maxStepUps is how many insufficient_scope step-ups one user may need
	// within stepUpWindow before the server is reported as refusing.
	maxStepUps   = 3
	stepUpWindow = time.Minute
	// endedFor is how long a declined, expired or refused login is
	// remembered: requests meanwhile fail with its error instead of asking
	// the person again (a connection makes several requests).
	endedFor = 10 * time.Second
)

type userKey struct{}

// WithUser returns ctx carrying the id of the user whose login requests
// made under it use.
func WithUser(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, userKey{}, id)
}

// UserFrom returns the user id WithUser put in ctx.
func UserFrom(ctx context.Context) (string, bool) {
	id, ok := ctx.Value(userKey{}).(string)
	return id, ok
}

// Config configures a server's Handler.
type Config struct {
	Server string // the MCP server's name: failures and store keys
	// ClientID and ClientSecret are pre-registered credentials.
	ClientID, ClientSecret string
	// PrivateKey and SigningAlg make private_key_jwt client assertions.
	PrivateKey crypto.Signer
	SigningAlg string
	// Scopes, when set, replace the scopes discovered.
	Scopes []string
	// ClientMetadataURL is a Client ID Metadata Document URL.
	ClientMetadataURL string
	// Grant is "authorization_code", "client_credentials" or "" (choose:
	// client_credentials with a private key, or with a secret when the
	// server offers client_credentials and not authorization_code).
	Grant string
	// Redirect returns the redirect URL (starting a loopback listener).
	Redirect func() (string, error)
	Ask      Asker
	Logins   *Logins
	// LoginTimeout bounds a person's login (default DefaultLoginTimeout).
	LoginTimeout time.Duration
	Store        Store
	HTTPClient   *http.Client
	Log          zerolog.Logger
}

// Handler is a server's auth.OAuthHandler: it keeps one login per user
// (the user of the request's context, else of the connection's).
type Handler struct {
	cfg    Config
	mu     sync.Mutex
	us     map[string]*user
	active atomic.Int32 // persons logging in
}

var _ auth.OAuthHandler = (*Handler)(nil)

// NewHandler returns a Handler for cfg.
func NewHandler(cfg Config) *Handler {
	if cfg.LoginTimeout <= 0 {
		cfg.LoginTimeout = DefaultLoginTimeout
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = http.DefaultClient
	}
	return &Handler{cfg: cfg, us: map[string]*user{}}
}

func (h *Handler) user(ctx context.Context) *user {
	id, _ := UserFrom(ctx)
	h.mu.Lock()
	defer h.mu.Unlock()
	u := h.us[id]
	if u == nil {
		u = &user{h: h, id: id, key: storeKey(h.cfg.Server, id)}
		h.us[id] = u
	}
	return u
}

// storeKey names a login in a Store: the server and the user, each
// escaped so that neither can forge the other.
func storeKey(server, user string) string {
	esc := func(s string) string {
		var b strings.Builder
		for _, r := range s {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
				b.WriteRune(r)
			} else {
				fmt.Fprintf(&b, "=%X", string(r))
			}
		}
		return b.String()
	}
	return esc(server) + ".u" + esc(user)
}

// TokenSource returns the token source of ctx's user (nil before a login).
func (h *Handler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	ts := h.user(ctx).source(ctx)
	if ts == nil {
		return nil, nil
	}
	return ts, nil
}

// Header returns the Authorization header of ctx's user, if the context
// names one, so that a request made for that user carries their token on
// a connection shared with others.
func (h *Handler) Header(ctx context.Context) (value string, ok bool) {
	if _, named := UserFrom(ctx); !named {
		return "", false
	}
	ts := h.user(ctx).source(ctx)
	if ts == nil {
		return "", true
	}
	tok, err := ts.Token()
	if err != nil || tok.AccessToken == "" {
		return "", true
	}
	return "Bearer " + tok.AccessToken, true
}

// LoggingIn reports whether a person is logging in (the wait has its own
// bound, LoginTimeout).
func (h *Handler) LoggingIn() bool { return h.active.Load() > 0 }

// Authorize logs ctx's user in after a 401 or an insufficient_scope 403.
func (h *Handler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return h.user(ctx).authorize(ctx, req, resp)
}

func (h *Handler) fail(kind failure.Kind, msg string, err error) error {
	return &failure.Error{Kind: kind, Source: failure.SourceMCP, Name: h.cfg.Server, Op: "authorize",
		Message: "MCP server " + quote(h.cfg.Server) + ": " + msg, Err: err}
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

// user is one user's login at one server.
type user struct {
	h       *Handler
	id, key string

	mu      sync.Mutex // guards the fields below
	loaded  bool
	ts      *tokenSource
	code    *auth.AuthorizationCodeHandler
	granted []string // client_credentials scopes granted, for step-up
	stepUps []time.Time
	ended   error // the last login's end, when it did not log in
	endedAt time.Time

	loginMu sync.Mutex // one login at a time per user
}

// source loads the stored login on first use and returns the user's
// token source.
func (u *user) source(ctx context.Context) *tokenSource {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.loaded && u.h.cfg.Store != nil {
		u.loaded = true
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
		b, err := u.h.cfg.Store.Load(sctx, u.key)
		cancel()
		switch {
		case err != nil:
			u.h.cfg.Log.Warn().Err(err).Msg("the stored login could not be read")
		case b != nil:
			rec, err := decodeRecord(b)
			if err != nil {
				u.h.cfg.Log.Warn().Err(err).Msg("the stored login is unreadable and is ignored")
				break
			}
			u.ts = u.newSource(rec, refreshWith(rec, u.h.cfg.HTTPClient))
		}
	}
	u.loaded = true
	return u.ts
}

func (u *user) newSource(rec *record, r refresher) *tokenSource {
	ts := &tokenSource{rec: rec, refresh: r, log: u.h.cfg.Log, timeout: tokenTimeout, now: time.Now}
	ts.save = func(r *record) { u.save(r) }
	ts.drop = func() { u.drop() }
	ts.reload = u.reload
	return ts
}

// refreshWith rebuilds a stored login's refresher: the refresh grant for
// an authorization-code login; none for client_credentials (a new grant
// follows the next 401).
func refreshWith(rec *record, c *http.Client) refresher {
	if rec.Grant == grantClientCredentials || rec.TokenURL == "" {
		return nil
	}
	cfg := &oauth2.Config{ClientID: rec.ClientID, ClientSecret: rec.ClientSecret, Scopes: rec.Scopes,
		Endpoint: oauth2.Endpoint{TokenURL: rec.TokenURL, AuthStyle: oauth2.AuthStyle(rec.AuthStyle)}}
	return refreshConfig(cfg, c)
}

func refreshConfig(cfg *oauth2.Config, c *http.Client) refresher {
	return func(ctx context.Context, cur *oauth2.Token) (*oauth2.Token, error) {
		ctx = context.WithValue(ctx, oauth2.HTTPClient, c)
		return cfg.TokenSource(ctx, &oauth2.Token{RefreshToken: cur.RefreshToken}).Token()
	}
}

// reload reads the user's record from the store (nil if none or unreadable).
func (u *user) reload() *record {
	if u.h.cfg.Store == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	b, err := u.h.cfg.Store.Load(ctx, u.key)
	if err != nil || b == nil {
		return nil
	}
	rec, err := decodeRecord(b)
	if err != nil {
		return nil
	}
	return rec
}

func (u *user) save(r *record) {
	if u.h.cfg.Store == nil {
		return
	}
	b, err := marshalRecord(r)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		err = u.h.cfg.Store.Save(ctx, u.key, b)
		cancel()
	}
	if err != nil {
		u.h.cfg.Log.Warn().Err(err).Msg("the login could not be saved")
	}
}

func (u *user) drop() {
	if u.h.cfg.Store == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := u.h.cfg.Store.Delete(ctx, u.key); err != nil {
		u.h.cfg.Log.Warn().Err(err).Msg("the stale login could not be removed")
	}
}

// install makes rec the user's login and saves it.
func (u *user) install(rec *record, r refresher) *tokenSource {
	ts := u.newSource(rec, r)
	u.mu.Lock()
	u.ts, u.loaded = ts, true
	u.mu.Unlock()
	u.save(rec)
	return ts
}

func (u *user) authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	h := u.h
	ch, err := parseChallenge(resp)
	if err != nil {
		return h.fail(failure.Protocol, err.Error(), err)
	}
	if resp.StatusCode == http.StatusForbidden && ch.err != "insufficient_scope" {
		return nil // not ours: the request is retried and its 403 reported
	}
	u.loginMu.Lock()
	defer u.loginMu.Unlock()
	// Another request of this user may have logged in meanwhile.
	if sent := strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer "); resp.StatusCode == http.StatusUnauthorized {
		if ts := u.source(ctx); ts != nil {
			if rec := ts.current(); rec != nil && rec.Token.AccessToken != sent && !ts.expiring(rec.Token) {
				return nil
			}
		}
	}
	if resp.StatusCode == http.StatusForbidden {
		if err := u.stepUp(); err != nil {
			return err
		}
	}
	serverURL := req.URL.String()
	if h.cfg.Grant != grantClientCredentials && h.cfg.PrivateKey == nil && h.cfg.ClientSecret == "" && h.cfg.Ask == nil {
		return h.fail(failure.PermissionDenied, "the server needs a login and nobody can be asked (set mcp.Config.Elicitor, or configure a client_credentials grant)", nil)
	}
	cc := h.cfg.Grant == grantClientCredentials || h.cfg.PrivateKey != nil
	if !cc && h.cfg.Grant == "" && h.cfg.ClientSecret != "" {
		d, err := discover(ctx, h.cfg.HTTPClient, ch, serverURL)
		if err != nil {
			return h.fail(failure.PermissionDenied, "authorization discovery failed: "+err.Error(), err)
		}
		g := d.asm.GrantTypesSupported
		cc = slices.Contains(g, grantClientCredentials) && !slices.Contains(g, "authorization_code")
	}
	if cc {
		return u.clientCredentials(ctx, ch, serverURL)
	}
	u.mu.Lock()
	ended, at := u.ended, u.endedAt
	u.mu.Unlock()
	if ended != nil && time.Since(at) < endedFor {
		return ended
	}
	err = u.authorizationCode(ctx, req, resp)
	var fe *failure.Error
	if errors.As(err, &fe) && (fe.Kind == failure.Declined || fe.Kind == failure.Timeout || fe.Kind == failure.PermissionDenied) {
		u.mu.Lock()
		u.ended, u.endedAt = err, time.Now()
		u.mu.Unlock()
	} else if err == nil {
		u.mu.Lock()
		u.ended = nil
		u.mu.Unlock()
	}
	return err
}

func (u *user) stepUp() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	now := time.Now()
	u.stepUps = slices.DeleteFunc(u.stepUps, func(t time.Time) bool { return now.Sub(t) > stepUpWindow })
	if len(u.stepUps) >= maxStepUps {
		return u.h.fail(failure.PermissionDenied, fmt.Sprintf("the server asked for more scopes %d times within %s; the grant it wants is not being given", maxStepUps, stepUpWindow), nil)
	}
	u.stepUps = append(u.stepUps, now)
	return nil
}

func (u *user) clientCredentials(ctx context.Context, ch challenge, serverURL string) error {
	h := u.h
	if h.cfg.ClientID == "" || h.cfg.ClientSecret == "" && h.cfg.PrivateKey == nil {
		return h.fail(failure.Config, "the client_credentials grant needs a client id and a client secret or private key", nil)
	}
	d, err := discover(ctx, h.cfg.HTTPClient, ch, serverURL)
	if err != nil {
		return h.fail(failure.PermissionDenied, "authorization discovery failed: "+err.Error(), err)
	}
	scopes := h.cfg.Scopes
	if len(scopes) == 0 {
		scopes = ch.scopes
		if len(scopes) == 0 {
			scopes = d.prm.ScopesSupported
		}
	}
	u.mu.Lock()
	scopes = union(u.granted, scopes)
	u.mu.Unlock()
	cc := &clientCredentials{clientID: h.cfg.ClientID, secret: h.cfg.ClientSecret, key: h.cfg.PrivateKey, alg: h.cfg.SigningAlg}
	fetch, style, err := cc.fetcher(d, scopes, func(ctx context.Context) context.Context {
		return context.WithValue(ctx, oauth2.HTTPClient, h.cfg.HTTPClient)
	})
	if err != nil {
		return h.fail(failure.Config, err.Error(), err)
	}
	tctx, cancel := context.WithTimeout(ctx, tokenTimeout)
	defer cancel()
	tok, err := fetch(tctx, nil)
	if err != nil {
		return h.fail(tokenErrKind(err), "the client_credentials grant failed: "+tokenErrText(err), err)
	}
	u.mu.Lock()
	u.granted = scopes
	u.mu.Unlock()
	u.install(&record{V: 1, Token: tok, Obtained: time.Now(), TokenURL: d.asm.TokenEndpoint, ClientID: h.cfg.ClientID,
		AuthStyle: int(style), Scopes: scopes, Grant: grantClientCredentials}, fetch)
	return nil
}

func (u *user) authorizationCode(ctx context.Context, req *http.Request, resp *http.Response) error {
	h := u.h
	code, err := u.codeHandler()
	if err != nil {
		return err
	}
	err = code.Authorize(ctx, req, resp)
	if err == nil {
		return nil
	}
	var fe *failure.Error
	if errors.As(err, &fe) {
		return err
	}
	if ctx.Err() != nil {
		return h.fail(failure.Canceled, "the login was cancelled", err)
	}
	return h.fail(tokenErrKind(err), "the login failed: "+tokenErrText(err), err)
}

// codeHandler returns the user's go-sdk authorization-code handler, made
// on first use (the redirect URL is known then).
func (u *user) codeHandler() (*auth.AuthorizationCodeHandler, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.code != nil {
		return u.code, nil
	}
	h := u.h
	if h.cfg.Redirect == nil {
		return nil, h.fail(failure.Config, "no redirect URL is configured for logins", nil)
	}
	redirect, err := h.cfg.Redirect()
	if err != nil {
		return nil, h.fail(failure.Unavailable, err.Error(), err)
	}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL: redirect,
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs: []string{redirect}, ClientName: "switchboard", GrantTypes: []string{"authorization_code", "refresh_token"},
			ResponseTypes: []string{"code"}}},
		RequestRefreshToken: true,
		Client:              h.cfg.HTTPClient,
		AuthorizationCodeFetcher: func(ctx context.Context, a *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			if h.cfg.Ask == nil {
				return nil, h.fail(failure.PermissionDenied, "the server needs a login and nobody can be asked (set mcp.Config.Elicitor, or configure a client_credentials grant)", nil)
			}
			h.cfg.Log.Info().Str("user", u.id).Msg("login needed: the authorization URL goes to a person")
			h.active.Add(1)
			defer h.active.Add(-1)
			return h.cfg.Logins.login(ctx, h.fail, h.cfg.Ask, u.id, a.URL, h.cfg.LoginTimeout)
		},
		NewTokenSource: func(_ context.Context, c *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			rec := &record{V: 1, Token: tok, Obtained: time.Now(), TokenURL: c.Endpoint.TokenURL, ClientID: c.ClientID,
				ClientSecret: c.ClientSecret, AuthStyle: int(c.Endpoint.AuthStyle), Scopes: c.Scopes, Grant: "authorization_code"}
			h.cfg.Log.Info().Str("user", u.id).Msg("logged in")
			return u.installLocked(rec, refreshConfig(c, h.cfg.HTTPClient)), nil
		},
	}
	if len(h.cfg.Scopes) > 0 {
		scopes := slices.Clone(h.cfg.Scopes)
		cfg.ScopeFilter = func([]string) []string { return scopes }
	}
	switch {
	case h.cfg.ClientID != "":
		pc := &oauthex.ClientCredentials{ClientID: h.cfg.ClientID}
		if h.cfg.ClientSecret != "" {
			pc.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: h.cfg.ClientSecret}
		}
		cfg.PreregisteredClient = pc
	case h.cfg.ClientMetadataURL != "":
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: h.cfg.ClientMetadataURL}
	}
	code, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return nil, h.fail(failure.Config, "the login cannot be set up: "+err.Error(), err)
	}
	u.code = code
	return code, nil
}

// installLocked is install for callers inside go-sdk's Authorize, which
// runs under loginMu but not mu.
func (u *user) installLocked(rec *record, r refresher) *tokenSource { return u.install(rec, r) }

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// tokenErrKind classifies a token endpoint failure: 5xx and 429 are
// transient, a refusal is PermissionDenied.
func tokenErrKind(err error) failure.Kind {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.Response != nil {
		if k := failure.KindOfStatus(re.Response.StatusCode); k == failure.Transient {
			return k
		}
	}
	return failure.PermissionDenied
}

// tokenErrText words a token endpoint failure without its body (which
// may echo credentials).
func tokenErrText(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		if re.ErrorCode != "" {
			return "the authorization server answered " + re.ErrorCode
		}
		if re.Response != nil {
			return "the authorization server answered HTTP " + re.Response.Status
		}
	}
	var fe *failure.Error
	if errors.As(err, &fe) {
		return fe.Message
	}
	return err.Error()
}
