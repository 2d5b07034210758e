package store

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/switchboard-dev/switchboard/bus/internal/wire"
	"github.com/switchboard-dev/switchboard/failure"
)

// kvConfig configures a JetStream key-value bucket. Bucket is required.
type kvConfig struct {
	// Bucket names the bucket (letters, digits, - and _).
	Bucket string
	// Description of the bucket.
	Description string
	// Replicas is the number of copies in a cluster (default 1).
	Replicas int
	// TTL expires values older than this (default: never).
	TTL time.Duration
	// History is the number of revisions kept per key (default 1).
	History int
	// Memory keeps the bucket in memory instead of files.
	Memory bool
}

// kvWire is the envelope of a typedKV value.
type kvWire[T any] struct {
	V     int `json:"v"`
	Value T   `json:"value"`
}

// kvEntry is a typedKV value with its key and revision.
type kvEntry[T any] struct {
	Key      string
	Value    T
	Revision uint64
	Created  time.Time
	// Deleted marks a deletion seen by Watch (Value is zero).
	Deleted bool
}

// typedKV is a typed JetStream key-value bucket whose values are versioned JSON
// ({"v":1,"value":...}). Update is revision-checked: a stale revision is a
// Conflict failure (errors.Is(err, failure.Conflict)). Every operation runs through the
// failure policy (transient failures are retried).
type typedKV[T any] struct {
	b   *jsConn
	kv  jetstream.KeyValue
	key failure.Key
}

// openKV creates the bucket, or updates its configuration, and returns it.
func openKV[T any](ctx context.Context, b *jsConn, cfg kvConfig) (*typedKV[T], error) {
	if cfg.Bucket == "" {
		return nil, b.fail(failure.Config, "open kv", nil, "KVConfig.Bucket is required")
	}
	storage := jetstream.FileStorage
	if cfg.Memory {
		storage = jetstream.MemoryStorage
	}
	if cfg.Replicas <= 0 {
		cfg.Replicas = 1
	}
	k := &typedKV[T]{b: b, key: failure.Key{Source: failure.SourceBus, Name: "kv:" + cfg.Bucket}}
	err := b.jetStreamAdmin(ctx, k.key, "open kv", func(ctx context.Context) error {
		kv, err := b.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket: cfg.Bucket, Description: cfg.Description, Replicas: cfg.Replicas,
			TTL: cfg.TTL, History: uint8(max(1, min(cfg.History, 64))), Storage: storage,
		})
		k.kv = kv
		return err
	})
	if err != nil {
		return nil, b.wrap(err, "open kv", "the key-value bucket could not be opened")
	}
	return k, nil
}

func (k *typedKV[T]) exec(ctx context.Context, op string, f func(context.Context) error) error {
	return k.b.pol().Execute(ctx, k.key, func(ctx context.Context) error { return k.b.classifyConn(f(ctx), op) })
}

// Get returns the value of key; a missing key is a NotFound failure
// (errors.Is(err, failure.NotFound)).
func (k *typedKV[T]) Get(ctx context.Context, key string) (kvEntry[T], error) {
	var e jetstream.KeyValueEntry
	if err := k.exec(ctx, "kv get", func(ctx context.Context) (err error) {
		e, err = k.kv.Get(ctx, key)
		return err
	}); err != nil {
		return kvEntry[T]{}, err
	}
	return decodeEntry[T](e)
}

func decodeEntry[T any](e jetstream.KeyValueEntry) (kvEntry[T], error) {
	out := kvEntry[T]{Key: e.Key(), Revision: e.Revision(), Created: e.Created()}
	if e.Operation() != jetstream.KeyValuePut {
		out.Deleted = true
		return out, nil
	}
	v, err := decodeKVValue[T](e.Value())
	if err != nil {
		return out, err
	}
	out.Value = v
	return out, nil
}

// decodeKVValue decodes a typedKV value payload.
func decodeKVValue[T any](data []byte) (T, error) {
	var w kvWire[T]
	var zero T
	if err := json.Unmarshal(data, &w); err != nil {
		return zero, protocolError("decode kv value", err)
	}
	if err := wire.CheckVersion("decode kv value", w.V); err != nil {
		return zero, err
	}
	return w.Value, nil
}

func encodeKV[T any](v T) ([]byte, error) {
	data, err := json.Marshal(kvWire[T]{V: wire.Version, Value: v})
	if err != nil {
		return nil, &failure.Error{Kind: failure.InvalidArgs, Source: failure.SourceBus, Op: "kv encode", Err: err,
			Message: "the value could not be encoded"}
	}
	return data, nil
}

// Create stores v under key if the key does not exist (or was deleted) and
// returns its revision; an existing key is a Conflict failure wrapping
// kind Conflict.
func (k *typedKV[T]) Create(ctx context.Context, key string, v T) (uint64, error) {
	data, err := encodeKV(v)
	if err != nil {
		return 0, err
	}
	var rev uint64
	err = k.exec(ctx, "kv create", func(ctx context.Context) (err error) {
		rev, err = k.kv.Create(ctx, key, data)
		return err
	})
	return rev, err
}

// Put stores v under key whatever its revision and returns the new one.
func (k *typedKV[T]) Put(ctx context.Context, key string, v T) (uint64, error) {
	data, err := encodeKV(v)
	if err != nil {
		return 0, err
	}
	var rev uint64
	err = k.exec(ctx, "kv put", func(ctx context.Context) (err error) {
		rev, err = k.kv.Put(ctx, key, data)
		return err
	})
	return rev, err
}

// Update stores v under key only if its current revision is rev, and
// returns the new revision; a stale revision is a Conflict failure
// (errors.Is(err, failure.Conflict)) (read the entry again and retry).
func (k *typedKV[T]) Update(ctx context.Context, key string, v T, rev uint64) (uint64, error) {
	data, err := encodeKV(v)
	if err != nil {
		return 0, err
	}
	var next uint64
	err = k.exec(ctx, "kv update", func(ctx context.Context) (err error) {
		next, err = k.kv.Update(ctx, key, data, rev)
		return err
	})
	return next, err
}

// Delete deletes key (a missing key is not an error).
func (k *typedKV[T]) Delete(ctx context.Context, key string) error {
	return k.exec(ctx, "kv delete", func(ctx context.Context) error { return k.kv.Delete(ctx, key) })
}

// Keys lists the bucket's keys.
func (k *typedKV[T]) Keys(ctx context.Context) ([]string, error) {
	var keys []string
	err := k.exec(ctx, "kv keys", func(ctx context.Context) error {
		keys = keys[:0]
		l, err := k.kv.ListKeys(ctx)
		if err != nil {
			if errors.Is(err, jetstream.ErrNoKeysFound) {
				return nil
			}
			return err
		}
		defer func() { _ = l.Stop() }()
		for key := range l.Keys() {
			keys = append(keys, key)
		}
		return nil
	})
	return keys, err
}

// Watch yields the current entries of keys matching pattern ("" or ">" for
// all, "task.*" for one level), then every change (deletions have Deleted
// set), until ctx is done or the loop stops. A malformed value is yielded as
// a Protocol error and the watch goes on.
func (k *typedKV[T]) Watch(ctx context.Context, pattern string) iter.Seq2[kvEntry[T], error] {
	return func(yield func(kvEntry[T], error) bool) {
		if pattern == "" {
			pattern = ">"
		}
		var w jetstream.KeyWatcher
		if err := k.exec(ctx, "kv watch", func(ctx context.Context) (err error) {
			w, err = k.kv.Watch(ctx, pattern)
			return err
		}); err != nil {
			yield(kvEntry[T]{}, err)
			return
		}
		defer func() { _ = w.Stop() }()
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-w.Updates():
				if !ok {
					if ctx.Err() == nil {
						yield(kvEntry[T]{}, classify(errors.New("watcher closed"), "kv watch"))
					}
					return
				}
				if e == nil { // end of the initial values
					continue
				}
				if !yield(decodeEntry[T](e)) {
					return
				}
			}
		}
	}
}
