package store

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/failure"
)

// OpenAgentInline is OpenAgent with values over inline bytes kept in the
// object store, for the tests of large records.
func OpenAgentInline(ctx context.Context, b *bus.Bus, cfg AgentConfig, inline int) (*jsStore, error) {
	if b == nil {
		return nil, failure.New(failure.Config, failure.SourceBus, "no bus")
	}
	return openAgent(ctx, connOf(b, cfg.Policy, cfg.Logger), cfg, inline)
}

// Objects counts the objects of a store's object store.
func Objects(ctx context.Context, s *jsStore) (int, error) {
	l, err := s.blobs.obs.List(ctx)
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return 0, nil
	}
	return len(l), err
}

// BlobName, StoreKey and IDOfKey are the store's parsers of outside input,
// for the fuzz tests.
var (
	BlobName = blobName
	StoreKey = storeKey
	IDOfKey  = idOfKey
)

// Names the external tests use.
type (
	KVConfig     = kvConfig
	Entry[T any] = kvEntry[T]
)

// OpenKV opens a typed bucket, for the external tests.
func OpenKV[T any](ctx context.Context, b *bus.Bus, cfg KVConfig) (*typedKV[T], error) {
	return openKV[T](ctx, connOf(b, nil, nil), cfg)
}

// DecodeKVValue decodes a typed bucket's value, for the fuzz tests.
func DecodeKVValue[T any](data []byte) (T, error) { return decodeKVValue[T](data) }

// EncodeVector and DecodeVector are the stored form of a tool vector.
var (
	EncodeVector = encodeVector
	DecodeVector = decodeVector
)
