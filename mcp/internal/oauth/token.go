// Package oauth is the MCP authorization client (OAuth 2.1) behind the mcp
// package's Auth settings: discovery, client identity, the authorization
// code grant with PKCE (through go-sdk's auth package), the
// client_credentials grant with a client secret or private_key_jwt, the
// person path (an authorization URL elicited in URL mode, a redirect
// received on a loopback listener or a host's handler) and tokens kept per
// server and per user in a Store.
package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/oauth2"
)

// Store keeps serialized token records by key. Load returns nil, nil for
// a key it does not hold.
type Store interface {
	Load(ctx context.Context, key string) ([]byte, error)
	Save(ctx context.Context, key string, data []byte) error
	Delete(ctx context.Context, key string) error
}

// maxRecord bounds a stored record (a token set is a few KiB at most).
const maxRecord = 64 << 10

// record is what a Store holds for one server and user: the token and
// what refreshing it needs.
type record struct {
	V            int           `json:"v"`
	Token        *oauth2.Token `json:"token"`
	Obtained     time.Time     `json:"obtained"`
	TokenURL     string        `json:"token_url,omitempty"`
	ClientID     string        `json:"client_id,omitempty"`
	ClientSecret string        `json:"client_secret,omitempty"`
	AuthStyle    int           `json:"auth_style,omitempty"`
	Scopes       []string      `json:"scopes,omitempty"`
	Grant        string        `json:"grant,omitempty"`
}

func decodeRecord(b []byte) (*record, error) {
	if len(b) > maxRecord {
		return nil, errors.New("stored token record is too large")
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	if r.V != 1 || r.Token == nil || r.Token.AccessToken == "" && r.Token.RefreshToken == "" {
		return nil, errors.New("stored token record is not a version 1 token set")
	}
	return &r, nil
}

// refresher obtains a new token given the current one (a refresh grant,
// or a new client_credentials grant).
type refresher func(ctx context.Context, cur *oauth2.Token) (*oauth2.Token, error)

// tokenSource is the token source the transport uses: it refreshes a
// token before it expires (a quarter of its lifetime, at most a minute,
// ahead), saves every new token to the store, and forgets a token whose
// refresh the server refused (invalid_grant: revoked or expired), so that
// the next request is answered 401 and a new login starts.
type tokenSource struct {
	mu      sync.Mutex
	rec     *record
	refresh refresher
	save    func(*record)
	drop    func()
	reload  func() *record // the store's record now (another replica may have refreshed)
	log     zerolog.Logger
	timeout time.Duration
	now     func() time.Time
}

func (t *tokenSource) Token() (*oauth2.Token, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.rec == nil {
		return nil, &oauth2.RetrieveError{ErrorCode: "invalid_grant", ErrorDescription: "no token: login needed"}
	}
	tok := t.rec.Token
	if tok.AccessToken != "" && !t.expiring(tok) {
		return tok, nil
	}
	if t.refresh == nil || (tok.RefreshToken == "" && t.rec.Grant != grantClientCredentials) {
		t.forget()
		return nil, &oauth2.RetrieveError{ErrorCode: "invalid_grant", ErrorDescription: "token expired and cannot be refreshed"}
	}
	if r := t.newer(tok); r != nil {
		return r.Token, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), t.timeout)
	defer cancel()
	nt, err := t.refresh(ctx, tok)
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && (re.ErrorCode == "invalid_grant" || re.ErrorCode == "invalid_client" || re.ErrorCode == "unauthorized_client") {
			if r := t.newer(tok); r != nil {
				return r.Token, nil // another replica refreshed (and rotated the refresh token) first
			}
			t.log.Info().Str("error", re.ErrorCode).Msg("the authorization server refused the refresh: a new login is needed")
			t.forget()
			return nil, &oauth2.RetrieveError{ErrorCode: "invalid_grant", ErrorDescription: "refresh refused"}
		}
		return nil, err
	}
	if nt.RefreshToken == "" {
		nt.RefreshToken = tok.RefreshToken
	}
	r := *t.rec
	r.Token, r.Obtained = nt, t.now()
	t.rec = &r
	t.save(&r)
	return nt, nil
}

// newer adopts the store's record when another holder of the login
// (a replica) has replaced tok with a token that is still good.
func (t *tokenSource) newer(tok *oauth2.Token) *record {
	if t.reload == nil {
		return nil
	}
	r := t.reload()
	if r == nil || r.Token.AccessToken == "" || r.Token.AccessToken == tok.AccessToken {
		return nil
	}
	old := t.rec
	t.rec = r
	if t.expiring(r.Token) {
		t.rec = old
		return nil
	}
	return r
}

// expiring reports whether tok expires within its refresh margin.
func (t *tokenSource) expiring(tok *oauth2.Token) bool {
	if tok.Expiry.IsZero() {
		return false
	}
	margin := time.Minute
	if life := tok.Expiry.Sub(t.rec.Obtained); life > 0 && life/4 < margin {
		margin = life / 4
	}
	return !t.now().Add(margin).Before(tok.Expiry)
}

func (t *tokenSource) forget() {
	t.rec = nil
	if t.drop != nil {
		t.drop()
	}
}

// current returns the record held, or nil.
func (t *tokenSource) current() *record {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.rec
}

func marshalRecord(r *record) ([]byte, error) { return json.Marshal(r) }
