package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	testAudience = "https://gateway.example/mcp"
	testSecret   = "0123456789abcdef0123456789abcdef-test-secret"
)

func hs256(t *testing.T, claims jwt.MapClaims, secret string) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestBearerTokens: over HTTP with -auth-audience every request needs a
// valid JWT for this resource: missing, malformed, wrong-audience, expired
// and wrongly signed tokens are refused with 401 (counted), and a valid
// token lists and calls.
func TestBearerTokens(t *testing.T) {
	if testing.Short() {
		t.Skip("starts node processes")
	}
	env := append(gatewayEnv(t), "SB_SECRET="+testSecret)
	url := startHTTP(t, env, append(gatewayArgs, "-auth-audience", testAudience, "-auth-issuer", "https://issuer.example",
		"-auth-hs256-secret-env", "SB_SECRET", "-auth-metadata-url", "https://gateway.example/.well-known/oauth-protected-resource")...)
	now := time.Now()
	good := jwt.MapClaims{"sub": "alice", "aud": testAudience, "iss": "https://issuer.example", "exp": now.Add(time.Hour).Unix()}
	with := func(k string, v any) jwt.MapClaims {
		c := jwt.MapClaims{}
		for kk, vv := range good {
			c[kk] = vv
		}
		c[k] = v
		return c
	}
	refused := []struct {
		kind, token string
	}{
		{"unauthenticated", ""},
		{"unauthenticated", "not-a-jwt"},
		{"wrong audience", hs256(t, with("aud", "https://other.example/mcp"), testSecret)},
		{"wrong audience", hs256(t, with("aud", []string{"https://other.example/mcp", "https://third.example"}), testSecret)},
		{"wrong issuer", hs256(t, with("iss", "https://evil.example"), testSecret)},
		{"expired", hs256(t, with("exp", now.Add(-time.Hour).Unix()), testSecret)},
		{"wrong key", hs256(t, good, strings.Repeat("x", 40))},
		{"no expiry", hs256(t, jwt.MapClaims{"sub": "alice", "aud": testAudience, "iss": "https://issuer.example"}, testSecret)},
	}
	counts := map[string]int{}
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, r := range refused {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if r.token != "" {
			req.Header.Set("Authorization", "Bearer "+r.token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s token: status %d, want 401", r.kind, res.StatusCode)
			continue
		}
		if !strings.Contains(res.Header.Get("WWW-Authenticate"), "resource_metadata=") {
			t.Errorf("%s token: WWW-Authenticate %q names no resource metadata", r.kind, res.Header.Get("WWW-Authenticate"))
		}
		counts[r.kind]++
	}
	http.DefaultClient.CloseIdleConnections()
	t.Logf("refused with 401: %v (of %d bad requests)", counts, len(refused))
	if counts["unauthenticated"] != 2 || counts["wrong audience"] != 2 {
		t.Errorf("refusals %v: want 2 unauthenticated and 2 wrong-audience", counts)
	}

	// A valid token works end to end with go-sdk's client.
	hc := &http.Client{Transport: bearer{token: hs256(t, good, testSecret)}}
	rep := goClient(t, &gomcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc})
	if !strings.Contains(rep.Echo, "from-go") {
		t.Errorf("with a valid token: %+v", rep)
	}
	hc.CloseIdleConnections()
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestVerifierKeys: an Ed25519 PEM key verifies EdDSA tokens only (an HS256
// token signed with the key's bytes, the algorithm-confusion attack, is
// refused), and the flags refuse what cannot work.
func TestVerifierKeys(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	der, _ := x509.MarshalPKIXPublicKey(pub)
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	keyFile := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(keyFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	a := authOptions{audience: testAudience, keyFile: keyFile}
	v, err := a.verifier()
	if err != nil {
		t.Fatal(err)
	}
	claims := jwt.MapClaims{"sub": "bob", "aud": testAudience, "exp": time.Now().Add(time.Hour).Unix(), "scope": "read write"}
	signed, _ := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims).SignedString(priv)
	info, err := v(context.Background(), signed, nil)
	if err != nil || info.UserID != "bob" || len(info.Scopes) != 2 {
		t.Fatalf("valid EdDSA token: %+v %v", info, err)
	}
	confused, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(pemBytes)
	if _, err := v(context.Background(), confused, nil); err == nil {
		t.Error("an HS256 token keyed with the public key was accepted")
	}
	for _, bad := range []authOptions{
		{keyFile: keyFile},       // no audience
		{audience: testAudience}, // no key
		{audience: testAudience, keyFile: "/nonexistent"},
		{audience: testAudience, secretEnv: "SB_UNSET_SECRET_FOR_TEST"},
	} {
		if _, err := bad.verifier(); err == nil {
			t.Errorf("%+v: accepted", bad)
		}
	}
}

// FuzzVerifier: no token, however malformed, panics the verifier or is
// accepted without the key.
func FuzzVerifier(f *testing.F) {
	v := newJWTVerifier([]byte(testSecret), []string{"HS256"}, testAudience, "", nil)
	f.Add("")
	f.Add("a.b.c")
	f.Add("eyJhbGciOiJub25lIn0.eyJhdWQiOiJodHRwczovL2dhdGV3YXkuZXhhbXBsZS9tY3AifQ.")
	f.Add("eyJhbGciOiJIUzI1NiJ9.e30.AAAA")
	f.Fuzz(func(t *testing.T, tok string) {
		if info, err := v(context.Background(), tok, nil); err == nil {
			t.Fatalf("accepted %q: %+v", tok, info)
		}
	})
}
