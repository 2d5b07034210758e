package store

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/failure"
)

// Sealer encrypts the records of a token store at rest:
// mcp.NewTokenSealer makes one (this package does not link MCP).
type Sealer interface {
	// Seal encrypts data stored under key.
	Seal(key string, data []byte) []byte
	// Open decrypts what Seal made for key.
	Open(key string, sealed []byte) ([]byte, error)
}

// TokensConfig configures [OpenTokens].
type TokensConfig struct {
	// Name is the KV bucket of the logins (default "mcp-logins"). An
	// existing bucket is used as it is.
	Name string
	// Replicas is the number of copies of a new bucket in a cluster
	// (default 1).
	Replicas int
	// Sealer encrypts every record (required: the bucket is shared, and a
	// login holds tokens).
	Sealer Sealer
	// Policy runs the bucket's opening (retried while JetStream elects its
	// leader; nil: failure.Default). Loads, saves and deletes are one
	// attempt each, bounded by their context.
	Policy failure.Policy
}

// Tokens keep an MCP client's OAuth logins in a JetStream key-value
// bucket, sealed, so that replicas of a service share their users' logins:
// it is an mcp.TokenStore (Load, Save, Delete) for mcp.Config.TokenStore.
type Tokens struct {
	kv   jetstream.KeyValue
	seal Sealer
}

// OpenTokens opens (creating it if needed) the bucket of an MCP client's
// logins on the bus's JetStream.
func OpenTokens(ctx context.Context, b *bus.Bus, cfg TokensConfig) (*Tokens, error) {
	if b == nil {
		return nil, failure.New(failure.Config, failure.SourceBus, "store.OpenTokens needs a bus")
	}
	if cfg.Sealer == nil {
		return nil, failure.New(failure.Config, failure.SourceBus, "store.TokensConfig.Sealer is required (mcp.NewTokenSealer)")
	}
	if cfg.Name == "" {
		cfg.Name = "mcp-logins"
	}
	c := connOf(b, cfg.Policy, nil)
	var kv jetstream.KeyValue
	err := c.jetStreamAdmin(ctx, failure.Key{Source: failure.SourceBus, Name: "jetstream"}, "open tokens", func(ctx context.Context) error {
		var err error
		kv, err = c.js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: cfg.Name,
			Description: "Switchboard MCP OAuth logins (sealed)", Replicas: max(cfg.Replicas, 1)})
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = c.js.KeyValue(ctx, cfg.Name)
		}
		return err
	})
	if err != nil {
		return nil, c.wrap(err, "open tokens", "the MCP login bucket "+cfg.Name+" could not be opened")
	}
	return &Tokens{kv: kv, seal: cfg.Sealer}, nil
}

// Load returns the record stored under key, or nil.
func (s *Tokens) Load(ctx context.Context, key string) ([]byte, error) {
	e, err := s.kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return nil, nil
	}
	if err != nil {
		return nil, failure.Wrap(failure.Transient, failure.SourceBus, err)
	}
	return s.seal.Open(key, e.Value())
}

// Save stores data under key, sealed.
func (s *Tokens) Save(ctx context.Context, key string, data []byte) error {
	if _, err := s.kv.Put(ctx, key, s.seal.Seal(key, data)); err != nil {
		return failure.Wrap(failure.Transient, failure.SourceBus, err)
	}
	return nil
}

// Delete removes key.
func (s *Tokens) Delete(ctx context.Context, key string) error {
	err := s.kv.Delete(ctx, key)
	if err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return failure.Wrap(failure.Transient, failure.SourceBus, err)
	}
	return nil
}
