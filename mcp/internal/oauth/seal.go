package oauth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
)

// sealPrefix versions a sealed record.
const sealPrefix = "sb1:"

// Sealer encrypts records at rest with AES-256-GCM (the key is the
// host's; the record's store key is authenticated as additional data, so
// a record moved to another key does not open).
type Sealer struct{ aead cipher.AEAD }

// NewSealer returns a Sealer for a 32-byte key.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("the token encryption key must be 32 bytes (AES-256), not %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: aead}, nil
}

// Seal encrypts data stored under key.
func (s *Sealer) Seal(key string, data []byte) []byte {
	nonce := make([]byte, s.aead.NonceSize())
	_, _ = rand.Read(nonce)
	out := append([]byte(sealPrefix), nonce...)
	return s.aead.Seal(out, nonce, data, []byte(key))
}

// Open decrypts what Seal made for key.
func (s *Sealer) Open(key string, sealed []byte) ([]byte, error) {
	if len(sealed) > maxRecord+len(sealPrefix)+64 {
		return nil, errors.New("the sealed token record is too large")
	}
	if len(sealed) < len(sealPrefix) || string(sealed[:len(sealPrefix)]) != sealPrefix {
		return nil, errors.New("the token record is not sealed with this format")
	}
	b := sealed[len(sealPrefix):]
	n := s.aead.NonceSize()
	if len(b) < n+s.aead.Overhead() {
		return nil, errors.New("the sealed token record is truncated")
	}
	out, err := s.aead.Open(nil, b[:n], b[n:], []byte(key))
	if err != nil {
		return nil, errors.New("the token record does not open with this key")
	}
	return out, nil
}
