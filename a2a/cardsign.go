package a2a

import (
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	jose "github.com/go-jose/go-jose/v4"

	"github.com/switchboard-dev/switchboard/a2a/internal/cardsig"
	"github.com/switchboard-dev/switchboard/failure"
)

// CardKey signs the agent cards a [Server] serves ([ServerConfig].CardKey):
// each card carries a JWS over its JCS canonical form in its signatures
// (A2A 1.0 §8.4), which peers verify against the public key published
// under KeyID (a [CardTrust] here; verifyAgentCardSignature in the JS SDK).
type CardKey struct {
	// Key is the private key: an *ecdsa.PrivateKey (P-256, P-384, P-521),
	// *rsa.PrivateKey or ed25519.PrivateKey.
	Key crypto.Signer
	// KeyID is the signature's kid: the name verifiers look the public key
	// up by (required).
	KeyID string
	// Algorithm is the JWS alg; "" chooses it from the key (ES256, ES384 or
	// ES512 by curve, RS256 for RSA, EdDSA for Ed25519).
	Algorithm string
	// JWKSURL, if set, goes in the signature's protected header (jku):
	// where the key set holding KeyID is published.
	JWKSURL string
}

// CardTrust is a client's trust policy for its peers' agent cards
// ([ToolsetConfig].CardTrust, [Peer].CardTrust): a card must carry a
// signature that verifies with one of the trusted keys, found by the
// signature's kid among Keys, JWKS and the key set at JWKSURL. A card
// that does not (unsigned, changed after signing, signed by an unknown
// key) is a [failure.Error] of Kind [failure.PermissionDenied] (Op
// "verify card"), handed to the toolset's policy; the peer is refused
// unless Warn is set and the policy's Outcome does not abort. A card
// given in Go ([Peer].Card) is not checked.
type CardTrust struct {
	// Keys are pinned public keys by kid: *ecdsa.PublicKey,
	// *rsa.PublicKey or ed25519.PublicKey.
	Keys map[string]crypto.PublicKey
	// JWKS is a JSON Web Key Set (RFC 7517) of trusted public keys.
	JWKS []byte
	// JWKSURL is fetched (with ToolsetConfig.HTTPClient, without the
	// peer's credentials; at most 1 MiB) for keys not found in Keys and
	// JWKS, and read again after JWKSMaxAge, or when a card names a kid it
	// does not hold (at most once a minute). A jku in a card is never
	// fetched: only keys configured here are trusted.
	JWKSURL string
	// JWKSMaxAge is how long the set at JWKSURL is used (default 5 minutes).
	JWKSMaxAge time.Duration
	// Warn, when set, makes a card that fails the check a warning: the
	// failure is handed to the policy (which logs it) and the peer is used,
	// unless the policy's Outcome aborts.
	Warn bool

	mu      sync.Mutex
	fetched *jose.JSONWebKeySet
	at      time.Time // when fetched was read
	tried   time.Time // last fetch attempt
}

// maxJWKSBytes bounds a key set read from JWKSURL.
const maxJWKSBytes = 1 << 20

// signer checks k and returns its card signer.
func (k *CardKey) signer() (*cardsig.Signer, error) {
	if k == nil {
		return nil, nil
	}
	return cardsig.NewSigner(cardsig.Key{Key: k.Key, ID: k.KeyID, Algorithm: k.Algorithm, JWKSURL: k.JWKSURL})
}

// signCard returns card with a signature by s over its JSON as served
// (encode), appended to the signatures it has.
func signCard(s *cardsig.Signer, card *a2ago.AgentCard, encode func(*a2ago.AgentCard) ([]byte, error)) (*a2ago.AgentCard, error) {
	b, err := encode(card)
	if err != nil {
		return nil, err
	}
	sig, err := s.Sign(b)
	if err != nil {
		return nil, err
	}
	c := *card
	c.Signatures = append(append([]a2ago.AgentCardSignature(nil), card.Signatures...),
		a2ago.AgentCardSignature{Protected: sig.Protected, Signature: sig.Signature, Header: sig.Header})
	return &c, nil
}

// check verifies a peer's card as read (raw) against the trust policy.
func (t *CardTrust) check(ctx context.Context, hc *http.Client, raw []byte) error {
	return cardsig.Verify(raw, func(h cardsig.Header) ([]any, error) { return t.keys(ctx, hc, h.KeyID) })
}

// keys returns the trusted keys named kid.
func (t *CardTrust) keys(ctx context.Context, hc *http.Client, kid string) ([]any, error) {
	var out []any
	if k, ok := t.Keys[kid]; ok && k != nil {
		out = append(out, k)
	}
	if len(t.JWKS) > 0 {
		var set jose.JSONWebKeySet
		if err := json.Unmarshal(t.JWKS, &set); err != nil {
			return nil, fmt.Errorf("CardTrust.JWKS is not a JSON Web Key Set: %w", err)
		}
		out = appendKeys(out, &set, kid)
	}
	if len(out) > 0 || t.JWKSURL == "" {
		return out, nil
	}
	set, err := t.remote(ctx, hc, kid)
	if err != nil {
		return nil, err
	}
	return appendKeys(out, set, kid), nil
}

func appendKeys(out []any, set *jose.JSONWebKeySet, kid string) []any {
	for _, k := range set.Key(kid) {
		if k.IsPublic() {
			out = append(out, &k)
		} else {
			pub := k.Public()
			out = append(out, &pub)
		}
	}
	return out
}

// remote returns the key set at JWKSURL, read again when it is older than
// JWKSMaxAge or lacks kid (at most once a minute).
func (t *CardTrust) remote(ctx context.Context, hc *http.Client, kid string) (*jose.JSONWebKeySet, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	maxAge := t.JWKSMaxAge
	if maxAge <= 0 {
		maxAge = 5 * time.Minute
	}
	now := time.Now()
	fresh := t.fetched != nil && now.Sub(t.at) < maxAge
	if fresh && (len(t.fetched.Key(kid)) > 0 || now.Sub(t.tried) < time.Minute) {
		return t.fetched, nil
	}
	if t.fetched == nil && !t.tried.IsZero() && now.Sub(t.tried) < time.Second {
		// A read failed a moment ago: do not send one per card.
		return nil, errors.New("the key set at CardTrust.JWKSURL could not be read a moment ago")
	}
	t.tried = now
	set, err := fetchJWKS(ctx, hc, t.JWKSURL)
	if err != nil {
		if t.fetched != nil {
			return t.fetched, nil // keep the last good set
		}
		return nil, err
	}
	t.fetched, t.at = set, now
	return set, nil
}

func fetchJWKS(ctx context.Context, hc *http.Client, u string) (*jose.JSONWebKeySet, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("CardTrust.JWKSURL is malformed: %w", err)
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading the key set at %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("reading the key set at %s answered HTTP %d", u, resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the key set at %s: %w", u, err)
	}
	if len(b) > maxJWKSBytes {
		return nil, fmt.Errorf("the key set at %s is larger than %d bytes", u, maxJWKSBytes)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("the key set at %s is not a JSON Web Key Set: %w", u, err)
	}
	return &set, nil
}

// verifyPeerCard applies the trust policy to a peer's card as read: nil
// when it verifies, or when it does not and the policy lets it pass as a
// warning; the failure otherwise.
func (ts *Toolset) verifyPeerCard(ctx context.Context, p Peer, raw []byte) error {
	trust := p.CardTrust
	if trust == nil {
		trust = ts.cfg.CardTrust
	}
	if trust == nil {
		return nil
	}
	hc := ts.cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	err := trust.check(ctx, hc, raw)
	if err == nil {
		return nil
	}
	fe := &failure.Error{Kind: failure.PermissionDenied, Source: failure.SourceA2A, Name: p.Name, Op: "verify card",
		Message: "the peer's agent card is not signed by a trusted key: " + err.Error(), Err: err}
	o := ts.pol().Handle(ctx, fe)
	if trust.Warn && !o.Abort {
		return nil
	}
	return fe
}
