package bus

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go/jetstream"
)

// PublishProgress publishes a progress report, for the external tests.
func PublishProgress(ctx context.Context, b *Bus, p progressUpdate) error {
	return b.publishProgress(ctx, p)
}

// ProgressPublisher is a publisher of one run's progress, for the benchmarks.
func ProgressPublisher(b *Bus, run string) func(context.Context, progressUpdate) error {
	return b.progressPublisher(run).publish
}

// NewSubjects is the subject scheme under prefix, for the external tests.
var NewSubjects = newSubjects

// Names the external tests use.
type (
	KVConfig       = kvConfig
	Entry[T any]   = kvEntry[T]
	ProgressUpdate = progressUpdate
)

// OpenKV opens a typed bucket, for the external tests.
func OpenKV[T any](ctx context.Context, b *Bus, cfg KVConfig) (*typedKV[T], error) {
	return openKV[T](ctx, b, cfg)
}

// OpenStoreInline is OpenStore with values over inline bytes kept in the
// object store, for the tests of large records.
func OpenStoreInline(ctx context.Context, b *Bus, cfg StoreConfig, inline int) (*jsStore, error) {
	return openStore(ctx, b, cfg, inline)
}

// StoreObjects counts the objects of a store's object store.
func StoreObjects(ctx context.Context, s *jsStore) (int, error) {
	l, err := s.blobs.obs.List(ctx)
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return 0, nil
	}
	return len(l), err
}

// DecodeAnswer, BlobName, StoreKey and IDOfKey are the store's and the
// answers' parsers of outside input, for the fuzz tests.
func DecodeAnswer(data []byte) error { _, err := decodeAnswer(data); return err }

var (
	BlobName = blobName
	StoreKey = storeKey
	IDOfKey  = idOfKey
)
