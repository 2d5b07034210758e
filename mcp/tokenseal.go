package mcp

import (
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/mcp/internal/oauth"
)

// TokenSealer encrypts login records at rest with AES-256-GCM under a key
// the host provides; the record's store key is authenticated with it, so a
// record moved to another key does not open. A [TokenStore] shared by
// replicas seals what it keeps with one: bus/store's OpenTokens requires
// it.
type TokenSealer struct{ s *oauth.Sealer }

// NewTokenSealer returns a TokenSealer for a 32-byte AES-256 key (a Config
// failure for any other length).
func NewTokenSealer(key []byte) (*TokenSealer, error) {
	s, err := oauth.NewSealer(key)
	if err != nil {
		return nil, failure.Wrap(failure.Config, failure.SourceMCP, err)
	}
	return &TokenSealer{s: s}, nil
}

// Seal encrypts data stored under key.
func (t *TokenSealer) Seal(key string, data []byte) []byte { return t.s.Seal(key, data) }

// Open decrypts what Seal made for key; a record sealed with another key,
// for another store key, or not sealed, does not open.
func (t *TokenSealer) Open(key string, sealed []byte) ([]byte, error) { return t.s.Open(key, sealed) }
