package cardsig

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCanonical(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"keys sorted, empty values dropped, signatures left out",
			`{"version":"1","name":"a","description":"","skills":[],"signatures":[{"protected":"x","signature":"y"}],"securitySchemes":{}}`,
			`{"name":"a","version":"1"}`},
		{"members outside the 1.0 card dropped (0.3 union)",
			`{"name":"a","url":"http://x","preferredTransport":"JSONRPC","protocolVersion":"0.3","capabilities":{"streaming":true}}`,
			`{"capabilities":{"streaming":true},"name":"a"}`},
		{"false kept when set (optional), nested empties dropped",
			`{"name":"a","capabilities":{"pushNotifications":false,"extensions":[{"uri":"u","params":{}}]},"provider":{"url":"","organization":""}}`,
			`{"capabilities":{"extensions":[{"uri":"u"}],"pushNotifications":false},"name":"a"}`},
		{"numbers and strings in JCS form",
			`{"name":"<&>é\u00e9","capabilities":{"extensions":[{"uri":"u","params":{"b":1e21,"a":1.50,"c":"\u001f"}}]}}`,
			`{"capabilities":{"extensions":[{"params":{"a":1.5,"b":1e+21,"c":"\u001f"},"uri":"u"}]},"name":"<&>éé"}`},
		{"empty card", `{}`, `{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Canonical([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
	for _, bad := range []string{``, `[]`, `null`, `{"name":1}`, `{"capabilities":{"streaming":"yes"}}`} {
		if _, err := Canonical([]byte(bad)); !errors.Is(err, ErrMalformed) {
			t.Errorf("Canonical(%s) = %v, want ErrMalformed", bad, err)
		}
	}
}

func signed(t testing.TB) ([]byte, *ecdsa.PrivateKey) {
	t.Helper()
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	s, err := NewSigner(Key{Key: k, ID: "k"})
	if err != nil {
		t.Fatal(err)
	}
	card := []byte(`{"name":"a","version":"1.0.0","capabilities":{"streaming":true}}`)
	sig, err := s.Sign(card)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	_ = json.Unmarshal(card, &m)
	m["signatures"] = []Signature{sig}
	b, _ := json.Marshal(m)
	return b, k
}

func TestVerify(t *testing.T) {
	card, k := signed(t)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	trusted := func(keys ...any) Keys {
		return func(h Header) ([]any, error) {
			if h.KeyID != "k" || h.Type != "JOSE" || h.Algorithm != "ES256" {
				return nil, nil
			}
			return keys, nil
		}
	}
	for _, tc := range []struct {
		name string
		card string
		keys Keys
		want error
	}{
		{"valid", string(card), trusted(&k.PublicKey), nil},
		{"valid among others", strings.Replace(string(card), `"signatures":[`, `"signatures":[{"protected":"e30","signature":"AA"},`, 1), trusted(&k.PublicKey), nil},
		{"wrong key", string(card), trusted(&other.PublicKey), ErrNoValidSignature},
		{"untrusted kid", string(card), trusted(), ErrNoValidSignature},
		{"changed", strings.Replace(string(card), `"1.0.0"`, `"1.0.1"`, 1), trusted(&k.PublicKey), ErrNoValidSignature},
		{"member added", strings.Replace(string(card), `"name"`, `"description":"new","name"`, 1), trusted(&k.PublicKey), ErrNoValidSignature},
		{"unsigned", `{"name":"a"}`, trusted(&k.PublicKey), ErrUnsigned},
		{"garbage header", `{"name":"a","signatures":[{"protected":"!!","signature":"AA"}]}`, trusted(&k.PublicKey), ErrMalformed},
		{"alg none", `{"name":"a","signatures":[{"protected":"eyJhbGciOiJub25lIiwia2lkIjoiayJ9","signature":"AA"}]}`, trusted(&k.PublicKey), ErrMalformed},
		{"not an object", `"x"`, trusted(&k.PublicKey), ErrMalformed},
		{"too many", `{"signatures":[` + strings.Repeat(`{},`, MaxSignatures) + `{}]}`, trusted(&k.PublicKey), ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Verify([]byte(tc.card), tc.keys)
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

// FuzzVerify: no input panics or verifies without a trusted key's
// signature; a signed card's seeds included.
func FuzzVerify(f *testing.F) {
	card, k := signed(f)
	f.Add(card)
	f.Add([]byte(`{"name":"a","signatures":[{"protected":"eyJhbGciOiJFUzI1NiIsImtpZCI6ImsifQ","signature":"AA"}]}`))
	f.Add([]byte(`{"signatures":[{"protected":"e30","signature":"AA","header":{"kid":"k"}}]}`))
	f.Add([]byte(`{"capabilities":{"extensions":[{"params":{"a":[1,{"b":null}]}}]},"signatures":[]}`))
	if b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "card-signed-js.json")); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		err := Verify(in, func(Header) ([]any, error) { return []any{&k.PublicKey}, nil })
		if err == nil {
			// Only a card carrying a signature by k verifies: its canonical
			// form must be the signed one's.
			a, _ := Canonical(in)
			b, _ := Canonical(card)
			if string(a) != string(b) {
				t.Fatalf("verified a card whose canonical form %s is not the signed %s", a, b)
			}
		}
		_, _ = Canonical(in)
	})
}
