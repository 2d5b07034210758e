// Package cardsig signs and verifies A2A agent cards (A2A 1.0 §8.4): each
// entry of a card's signatures is a JWS (RFC 7515, flattened JSON, payload
// detached) over the card's canonical form (§8.4.1: the card read as the
// A2A 1.0 AgentCard message without its signatures, empty values left out,
// serialised with JCS, RFC 8785). The canonical form is the one the JS and
// Python A2A SDKs compute, so cards signed by either verify here and the
// other way round.
package cardsig

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	a2apb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	jose "github.com/go-jose/go-jose/v4"
	"github.com/gowebpki/jcs"
	"google.golang.org/protobuf/encoding/protojson"
)

// Algorithms are the JWS algorithms a signature may use: asymmetric ones
// only (a shared-secret HMAC would let anyone who verifies also sign).
var Algorithms = []jose.SignatureAlgorithm{
	jose.ES256, jose.ES384, jose.ES512, jose.EdDSA,
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
}

// MaxSignatures bounds the signatures read from one card.
const MaxSignatures = 16

// Errors of Verify; each is wrapped with what was wrong.
var (
	// ErrUnsigned: the card carries no signature.
	ErrUnsigned = errors.New("the agent card is not signed")
	// ErrMalformed: the card or one of its signatures does not parse.
	ErrMalformed = errors.New("the agent card's signature is malformed")
	// ErrNoValidSignature: no signature verifies with a trusted key.
	ErrNoValidSignature = errors.New("no signature on the agent card verifies with a trusted key")
)

// Signature is one entry of a card's signatures member.
type Signature struct {
	Protected string         `json:"protected"`
	Signature string         `json:"signature"`
	Header    map[string]any `json:"header,omitempty"`
}

// Canonical returns the bytes a card's signatures cover: the card (JSON,
// any A2A version) read as the A2A 1.0 AgentCard message (members outside
// it are dropped, as the JS and Python SDKs drop them), without
// signatures, then written in proto JSON with empty strings, lists and
// objects left out, in JCS.
func Canonical(card []byte) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(card, &m); err != nil || m == nil {
		return nil, fmt.Errorf("%w: the card is not a JSON object", ErrMalformed)
	}
	delete(m, "signatures")
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	var pb a2apb.AgentCard
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(b, &pb); err != nil {
		return nil, fmt.Errorf("%w: the card is not an A2A 1.0 agent card: %v", ErrMalformed, err)
	}
	out, err := protojson.Marshal(&pb)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	v, ok := clean(v)
	if !ok {
		v = map[string]any{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return jcs.Transform(buf.Bytes())
}

// clean drops empty strings, nulls, and lists and objects that are empty
// (after cleaning their members), as the SDKs do before JCS; ok is false
// when v itself is empty.
func clean(v any) (any, bool) {
	switch x := v.(type) {
	case nil:
		return nil, false
	case string:
		return x, x != ""
	case []any:
		out := x[:0]
		for _, e := range x {
			if c, ok := clean(e); ok {
				out = append(out, c)
			}
		}
		return out, len(out) > 0
	case map[string]any:
		for k, e := range x {
			if c, ok := clean(e); ok {
				x[k] = c
			} else {
				delete(x, k)
			}
		}
		return x, len(x) > 0
	}
	return v, true
}

// Key is a private key that signs cards and the kid it is published under.
type Key struct {
	// Key is an *ecdsa.PrivateKey, *rsa.PrivateKey or ed25519.PrivateKey.
	Key crypto.Signer
	// ID is the kid header (required).
	ID string
	// Algorithm is the JWS alg ("" chooses it from the key: ES256, ES384
	// or ES512 by curve, RS256 for RSA, EdDSA for Ed25519).
	Algorithm string
	// JWKSURL, if set, is the jku header: where verifiers find the key.
	JWKSURL string
}

// algorithm is k's JWS algorithm.
func (k Key) algorithm() (jose.SignatureAlgorithm, error) {
	if k.Algorithm != "" {
		for _, a := range Algorithms {
			if string(a) == k.Algorithm {
				return a, nil
			}
		}
		return "", fmt.Errorf("signing algorithm %q is not one of %v", k.Algorithm, Algorithms)
	}
	switch p := k.Key.(type) {
	case *ecdsa.PrivateKey:
		switch p.Curve {
		case elliptic.P256():
			return jose.ES256, nil
		case elliptic.P384():
			return jose.ES384, nil
		case elliptic.P521():
			return jose.ES512, nil
		}
		return "", errors.New("the ECDSA signing key is not on P-256, P-384 or P-521")
	case *rsa.PrivateKey:
		return jose.RS256, nil
	case ed25519.PrivateKey:
		return jose.EdDSA, nil
	case nil:
		return "", errors.New("no signing key")
	}
	return "", fmt.Errorf("signing key of type %T is not an ECDSA, RSA or Ed25519 private key", k.Key)
}

// Signer is k ready to sign cards.
type Signer struct{ s jose.Signer }

// NewSigner checks k and returns its signer.
func NewSigner(k Key) (*Signer, error) {
	if k.ID == "" {
		return nil, errors.New("the signing key has no key id (kid)")
	}
	alg, err := k.algorithm()
	if err != nil {
		return nil, err
	}
	opts := (&jose.SignerOptions{}).WithType("JOSE").WithHeader("kid", k.ID)
	if k.JWKSURL != "" {
		opts = opts.WithHeader("jku", k.JWKSURL)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: k.Key}, opts)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	return &Signer{s: s}, nil
}

// Sign signs card (JSON) and returns the signature entry to add to it.
func (s *Signer) Sign(card []byte) (Signature, error) {
	payload, err := Canonical(card)
	if err != nil {
		return Signature{}, err
	}
	jws, err := s.s.Sign(payload)
	if err != nil {
		return Signature{}, fmt.Errorf("signing the card: %w", err)
	}
	var flat struct {
		Protected string         `json:"protected"`
		Signature string         `json:"signature"`
		Header    map[string]any `json:"header"`
	}
	if err := json.Unmarshal([]byte(jws.FullSerialize()), &flat); err != nil {
		return Signature{}, fmt.Errorf("signing the card: %w", err)
	}
	return Signature{Protected: flat.Protected, Signature: flat.Signature, Header: flat.Header}, nil
}

// Header is what a signature's protected header says about its key.
type Header struct {
	Algorithm string `json:"alg"`
	KeyID     string `json:"kid"`
	Type      string `json:"typ"`
	JWKSURL   string `json:"jku"`
}

// Keys returns the trusted public keys for a signature's header (none: the
// key is not trusted). A key is an *ecdsa.PublicKey, *rsa.PublicKey,
// ed25519.PublicKey or *jose.JSONWebKey.
type Keys func(h Header) ([]any, error)

// Verify checks card's signatures: nil when one of them verifies, over the
// card's canonical form, with a key that keys returns for it. Otherwise
// the error wraps ErrUnsigned, ErrMalformed or ErrNoValidSignature (and a
// failure of keys) and says why each signature failed.
func Verify(card []byte, keys Keys) error {
	var env struct {
		Signatures []json.RawMessage `json:"signatures"`
	}
	if err := json.Unmarshal(card, &env); err != nil {
		return fmt.Errorf("%w: the card is not a JSON object with a signatures list: %v", ErrMalformed, err)
	}
	if len(env.Signatures) == 0 {
		return ErrUnsigned
	}
	if len(env.Signatures) > MaxSignatures {
		return fmt.Errorf("%w: %d signatures (at most %d are read)", ErrMalformed, len(env.Signatures), MaxSignatures)
	}
	payload, err := Canonical(card)
	if err != nil {
		return err
	}
	b64 := base64.RawURLEncoding.EncodeToString(payload)
	var errs []error
	for i, raw := range env.Signatures {
		err := verifyOne(raw, b64, keys)
		if err == nil {
			return nil
		}
		errs = append(errs, fmt.Errorf("signature %d: %w", i, err))
	}
	// The first typed cause decides the class: a key source that failed
	// before a malformed entry before an untrusted or wrong one.
	return fmt.Errorf("%w: %w", classOf(errs), errors.Join(errs...))
}

// errKeySource marks a failure of Keys (a JWKS that could not be read).
var errKeySource = errors.New("the trusted keys could not be read")

func classOf(errs []error) error {
	for _, e := range errs {
		if errors.Is(e, errKeySource) {
			return ErrNoValidSignature
		}
	}
	for _, e := range errs {
		if errors.Is(e, ErrMalformed) {
			return ErrMalformed
		}
	}
	return ErrNoValidSignature
}

// verifyOne checks one signature entry against the base64url payload.
func verifyOne(raw json.RawMessage, payloadB64 string, keys Keys) error {
	var sig Signature
	if err := json.Unmarshal(raw, &sig); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if sig.Protected == "" || sig.Signature == "" {
		return fmt.Errorf("%w: protected or signature is empty", ErrMalformed)
	}
	hb, err := base64.RawURLEncoding.DecodeString(sig.Protected)
	if err != nil {
		return fmt.Errorf("%w: the protected header is not base64url: %v", ErrMalformed, err)
	}
	var h Header
	if err := json.Unmarshal(hb, &h); err != nil {
		return fmt.Errorf("%w: the protected header is not a JSON object: %v", ErrMalformed, err)
	}
	if h.KeyID == "" || h.Algorithm == "" {
		return fmt.Errorf("%w: the protected header lacks kid or alg", ErrMalformed)
	}
	flat, err := json.Marshal(map[string]any{"payload": payloadB64, "protected": sig.Protected,
		"signature": sig.Signature, "header": sig.Header})
	if err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	jws, err := jose.ParseSigned(string(flat), Algorithms)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	cands, err := keys(h)
	if err != nil {
		return fmt.Errorf("%w: %w", errKeySource, err)
	}
	if len(cands) == 0 {
		return fmt.Errorf("key %q is not trusted", h.KeyID)
	}
	for _, k := range cands {
		if _, err := jws.Verify(k); err == nil {
			return nil
		}
	}
	return fmt.Errorf("it does not verify with trusted key %q (the card was changed after signing, or signed with another key)", h.KeyID)
}
