package a2a

import (
	"bufio"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
)

// recordingPolicy is the default policy that also records what it handled.
type recordingPolicy struct {
	failure.Policy
	handled []*failure.Error
}

func (p *recordingPolicy) Handle(ctx context.Context, err error) failure.Outcome {
	o := p.Policy.Handle(ctx, err)
	p.handled = append(p.handled, o.Err)
	return o
}

func newP256(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// jwkJSON is the JWK of key (private or public) under kid.
func jwkJSON(t testing.TB, key any, kid string) string {
	t.Helper()
	b, err := json.Marshal(jose.JSONWebKey{Key: key, KeyID: kid, Algorithm: "ES256", Use: "sig"})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCardSigning: a served card signed with CardKey is accepted by a
// toolset trusting the key (pinned, in a JWKS, at a JWKS URL), and refused
// (or warned about, by policy) when the key is another, or the card is
// unsigned; the failure is a typed PermissionDenied handed to the policy.
func TestCardSigning(t *testing.T) {
	signKey := newP256(t)
	other := newP256(t)
	_, signed := newWorker(t, ServerConfig{CardKey: &CardKey{Key: signKey, KeyID: "k1"}})
	_, unsigned := newWorker(t, ServerConfig{})
	set := func(keys ...jose.JSONWebKey) []byte {
		b, _ := json.Marshal(jose.JSONWebKeySet{Keys: keys})
		return b
	}
	var jwksHits atomic.Int32
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		jwksHits.Add(1)
		if r.Header.Get("Authorization") != "" {
			t.Error("the JWKS request carried the peer's credentials")
		}
		_, _ = w.Write(set(jose.JSONWebKey{Key: &other.PublicKey, KeyID: "k0"}, jose.JSONWebKey{Key: &signKey.PublicKey, KeyID: "k1"}))
	}))
	defer jwks.Close()
	t.Setenv("CARD_TOKEN", "secret")

	cases := []struct {
		name   string
		url    string
		trust  *CardTrust
		refuse bool
		warned bool
	}{
		{"pinned key", signed.URL, &CardTrust{Keys: map[string]crypto.PublicKey{"k1": &signKey.PublicKey}}, false, false},
		{"jwks", signed.URL, &CardTrust{JWKS: set(jose.JSONWebKey{Key: &signKey.PublicKey, KeyID: "k1"})}, false, false},
		{"jwks url", signed.URL, &CardTrust{JWKSURL: jwks.URL}, false, false},
		{"no trust configured", unsigned.URL, nil, false, false},
		{"another key under the kid", signed.URL, &CardTrust{Keys: map[string]crypto.PublicKey{"k1": &other.PublicKey}}, true, false},
		{"unknown kid", signed.URL, &CardTrust{Keys: map[string]crypto.PublicKey{"k2": &signKey.PublicKey}}, true, false},
		{"unsigned card", unsigned.URL, &CardTrust{Keys: map[string]crypto.PublicKey{"k1": &signKey.PublicKey}}, true, false},
		{"unsigned card, warn", unsigned.URL, &CardTrust{Keys: map[string]crypto.PublicKey{"k1": &signKey.PublicKey}, Warn: true}, false, true},
		{"another key, warn", signed.URL, &CardTrust{Keys: map[string]crypto.PublicKey{"k1": &other.PublicKey}, Warn: true}, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pol := &recordingPolicy{Policy: failure.NewPolicy(failure.PolicyConfig{MaxAttempts: 1})}
			ts, err := NewToolset(ctxT(t), ToolsetConfig{Policy: pol, CardTrust: tc.trust,
				Peers: []Peer{{Name: "w", URL: tc.url, BearerTokenEnv: "CARD_TOKEN"}}})
			if tc.refuse {
				var fe *failure.Error
				if !errors.As(err, &fe) || fe.Kind != failure.PermissionDenied || fe.Name != "w" || fe.Op != "verify card" {
					t.Fatalf("err = %#v, want a PermissionDenied failure of peer w", err)
				}
				if len(pol.handled) != 1 || pol.handled[0].Kind != failure.PermissionDenied {
					t.Fatalf("policy handled %v", pol.handled)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer ts.Close()
			if got := len(pol.handled) == 1 && pol.handled[0].Op == "verify card"; got != tc.warned {
				t.Fatalf("warned = %v, want %v (handled %v)", got, tc.warned, pol.handled)
			}
		})
	}
	if jwksHits.Load() != 1 {
		t.Errorf("the JWKS URL was read %d times, want 1", jwksHits.Load())
	}
}

// TestCardSigningKeys: each kind of key signs a card our verifier accepts;
// a bad CardKey fails NewServer with a Config failure.
func TestCardSigningKeys(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	for _, tc := range []struct {
		name string
		key  crypto.Signer
		pub  crypto.PublicKey
		alg  string
	}{
		{"ES384", p384, &p384.PublicKey, ""},
		{"RS256", rsaKey, &rsaKey.PublicKey, ""},
		{"PS256", rsaKey, &rsaKey.PublicKey, "PS256"},
		{"EdDSA", edKey, edKey.Public(), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, hs := newWorker(t, ServerConfig{CardKey: &CardKey{Key: tc.key, KeyID: "k", Algorithm: tc.alg}})
			ts, err := NewToolset(ctxT(t), ToolsetConfig{CardTrust: &CardTrust{Keys: map[string]crypto.PublicKey{"k": tc.pub}},
				Peers: []Peer{{Name: "w", URL: hs.URL}}})
			if err != nil {
				t.Fatal(err)
			}
			_ = ts.Close()
		})
	}
	for _, tc := range []struct {
		name string
		key  CardKey
		want string
	}{
		{"no kid", CardKey{Key: newP256(t)}, "key id"},
		{"no key", CardKey{KeyID: "k"}, "no signing key"},
		{"hmac", CardKey{Key: newP256(t), KeyID: "k", Algorithm: "HS256"}, "HS256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ag, err := agent.New(context.Background(), agent.Config{Name: "worker", Model: workerModel()})
			if err != nil {
				t.Fatal(err)
			}
			_, err = NewServer(context.Background(), ServerConfig{Agent: ag, CardKey: &tc.key})
			var fe *failure.Error
			if !errors.As(err, &fe) || fe.Kind != failure.Config || !strings.Contains(fe.Message, tc.want) {
				t.Fatalf("err = %v, want a Config failure naming %q", err, tc.want)
			}
		})
	}
}

// TestCardSignedByJSVector: a card signed by @a2a-js/sdk 1.3.0's
// generateAgentCardSignature (testdata/card-signed-js.json, key in
// testdata/card-signed-js.jwk) verifies here without node, and fails once
// a signed member changes.
func TestCardSignedByJSVector(t *testing.T) {
	card, err := os.ReadFile(filepath.Join("testdata", "card-signed-js.json"))
	if err != nil {
		t.Fatal(err)
	}
	jwk, err := os.ReadFile(filepath.Join("testdata", "card-signed-js.jwk"))
	if err != nil {
		t.Fatal(err)
	}
	trust := &CardTrust{JWKS: []byte(`{"keys":[` + string(jwk) + `]}`)}
	if err := trust.check(ctxT(t), http.DefaultClient, card); err != nil {
		t.Fatalf("the JS-signed card does not verify: %v", err)
	}
	changed := strings.Replace(string(card), `"js-peer"`, `"js-peer2"`, 1)
	if err := trust.check(ctxT(t), http.DefaultClient, []byte(changed)); err == nil {
		t.Fatal("a changed card verified")
	}
}

// TestCardSigningWithJS: the JS SDK's server signs its card and our
// client verifies it; the JS SDK's verifier accepts the card our server
// signs, and rejects it changed or with another key.
func TestCardSigningWithJS(t *testing.T) {
	jsKey := newP256(t)
	port := startNode(t, "a2a-js-server.mjs", "sign="+jwkJSON(t, jsKey, "js-key"))
	base := "http://127.0.0.1:" + port
	t.Run("our client verifies the JS card", func(t *testing.T) {
		ts, err := NewToolset(ctxT(t), ToolsetConfig{CardTrust: &CardTrust{Keys: map[string]crypto.PublicKey{"js-key": &jsKey.PublicKey}},
			Peers: []Peer{{Name: "js", URL: base}}})
		if err != nil {
			t.Fatal(err)
		}
		defer ts.Close()
		tools, _ := ts.Tools(ctxT(t))
		res, err := tools[0].Call(ctxT(t), json.RawMessage(`{"message":"hello signed"}`))
		if err != nil || !strings.Contains(res.Text(), "echo: hello signed") {
			t.Fatalf("call = %v, %v", res, err)
		}
	})
	t.Run("our client refuses it with another key", func(t *testing.T) {
		_, err := NewToolset(ctxT(t), ToolsetConfig{CardTrust: &CardTrust{Keys: map[string]crypto.PublicKey{"js-key": &newP256(t).PublicKey}},
			Peers: []Peer{{Name: "js", URL: base}}})
		if !errors.Is(err, failure.PermissionDenied) {
			t.Fatalf("err = %v, want PermissionDenied", err)
		}
	})
	t.Run("JS verifies our card", func(t *testing.T) {
		ourKey := newP256(t)
		_, hs := newWorker(t, ServerConfig{CardKey: &CardKey{Key: ourKey, KeyID: "our-key", JWKSURL: "https://example.com/jwks.json"},
			Provider: nil, DocumentationURL: "https://example.com/docs"})
		out := runNode(t, "a2a-card-verify.mjs", hs.URL+cardPath, jwkJSON(t, &ourKey.PublicKey, "our-key"))
		checks := 0
		sc := bufio.NewScanner(strings.NewReader(out))
		for sc.Scan() {
			var c struct {
				Check  string `json:"check"`
				OK     bool   `json:"ok"`
				Detail string `json:"detail"`
			}
			if json.Unmarshal(sc.Bytes(), &c) != nil {
				continue
			}
			checks++
			if !c.OK {
				t.Errorf("%s: %s", c.Check, c.Detail)
			}
		}
		if checks != 3 || !strings.Contains(out, "DONE") {
			t.Fatalf("JS verifier output:\n%s", out)
		}
	})
}
