// Package tokenkv keeps the mcp package's OAuth logins in a NATS
// JetStream key-value bucket, encrypted at rest with AES-256-GCM under a
// key the host provides, so that replicas of a service share their
// users' logins: New returns an mcp.TokenStore for mcp.Config.TokenStore.
package tokenkv

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/mcp"
	"github.com/switchboard-dev/switchboard/mcp/internal/oauth"
)

// store is an mcp.TokenStore over a JetStream bucket.
type store struct {
	kv   jetstream.KeyValue
	seal *oauth.Sealer
}

// New returns an mcp.TokenStore over kv (for example the bucket of
// js.CreateOrUpdateKeyValue); key is the 32-byte AES-256 key records are
// encrypted with.
func New(kv jetstream.KeyValue, key []byte) (mcp.TokenStore, error) {
	if kv == nil {
		return nil, failure.New(failure.Config, failure.SourceMCP, "tokenkv.New: the bucket is nil")
	}
	s, err := oauth.NewSealer(key)
	if err != nil {
		return nil, failure.Wrap(failure.Config, failure.SourceMCP, err)
	}
	return &store{kv: kv, seal: s}, nil
}

// Load returns the record stored under key, or nil.
func (s *store) Load(ctx context.Context, key string) ([]byte, error) {
	e, err := s.kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return nil, nil
	}
	if err != nil {
		return nil, failure.Wrap(failure.Transient, failure.SourceBus, err)
	}
	return s.seal.Open(key, e.Value())
}

// Save stores data under key.
func (s *store) Save(ctx context.Context, key string, data []byte) error {
	if _, err := s.kv.Put(ctx, key, s.seal.Seal(key, data)); err != nil {
		return failure.Wrap(failure.Transient, failure.SourceBus, err)
	}
	return nil
}

// Delete removes key.
func (s *store) Delete(ctx context.Context, key string) error {
	err := s.kv.Delete(ctx, key)
	if err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return failure.Wrap(failure.Transient, failure.SourceBus, err)
	}
	return nil
}
