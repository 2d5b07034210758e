package store

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/switchboard-dev/switchboard/failure"
)

// The expected outcomes of a bucket operation. They are answers, not
// failures: they never count against the bucket's health.
var (
	errKeyNotFound      = errors.New("store: key not found")
	errKeyExists        = errors.New("store: key exists")
	errRevisionMismatch = errors.New("store: revision mismatch")
)

// bucket runs the stores' operations on one JetStream key-value bucket
// through one failure policy (key {bus, <bucket>}): the task store and the
// push config store share it, so that one circuit guards the bucket and
// every failure is a *failure.Error.
type taskBucket struct {
	kv     jetstream.KeyValue
	name   string
	policy failure.Policy // nil: failure.Default
	key    failure.Key
}

func newTaskBucket(kv jetstream.KeyValue, name string, policy failure.Policy) *taskBucket {
	return &taskBucket{kv: kv, name: name, policy: policy, key: failure.Key{Source: failure.SourceBus, Name: name}}
}

// expected maps jetstream's answers for absent keys, existing keys and
// stale revisions onto the package's sentinels (nil: not one of them).
func expected(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrKeyDeleted):
		return errKeyNotFound
	case errors.Is(err, jetstream.ErrKeyRevisionMismatch):
		return errRevisionMismatch
	case errors.Is(err, jetstream.ErrKeyExists):
		return errKeyExists
	}
	return nil
}

// exec runs fn through the policy. An expected outcome is returned as its
// sentinel (the operation succeeded as far as the bucket's health goes);
// any other error is a *failure.Error (Source bus, Name the bucket, Op op).
func (b *taskBucket) exec(ctx context.Context, op string, fn func(ctx context.Context) error) error {
	var sentinel error
	err := failure.Or(b.policy).Execute(ctx, b.key, func(ctx context.Context) error {
		e := fn(ctx)
		if x := expected(e); x != nil {
			sentinel = x
			return nil
		}
		sentinel = nil
		if e != nil {
			k := failure.KindOf(e)
			return &failure.Error{Kind: k, Source: failure.SourceBus, Name: b.name, Op: op,
				Retryable: k == failure.Transient || k == failure.Timeout, Err: e}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return sentinel
}

// get reads a key: its entry, errKeyNotFound, or a *failure.Error.
func (b *taskBucket) get(ctx context.Context, op, key string) (jetstream.KeyValueEntry, error) {
	var e jetstream.KeyValueEntry
	err := b.exec(ctx, op, func(ctx context.Context) error {
		var err error
		e, err = b.kv.Get(ctx, key)
		return err
	})
	return e, err
}

// create writes a new key: its revision, errKeyExists, or a *failure.Error.
func (b *taskBucket) create(ctx context.Context, op, key string, val []byte) (uint64, error) {
	var rev uint64
	err := b.exec(ctx, op, func(ctx context.Context) error {
		var err error
		rev, err = b.kv.Create(ctx, key, val)
		return err
	})
	if errors.Is(err, errRevisionMismatch) {
		err = errKeyExists
	}
	return rev, err
}

// update writes a key still at revision prev: its new revision,
// errRevisionMismatch (errKeyExists from jetstream means the same), or a
// *failure.Error.
func (b *taskBucket) update(ctx context.Context, op, key string, val []byte, prev uint64) (uint64, error) {
	var rev uint64
	err := b.exec(ctx, op, func(ctx context.Context) error {
		var err error
		rev, err = b.kv.Update(ctx, key, val, prev)
		return err
	})
	if errors.Is(err, errKeyExists) {
		err = errRevisionMismatch
	}
	return rev, err
}

// remove deletes a key if it is still at revision rev (a writer that got
// there first keeps its write).
func (b *taskBucket) remove(ctx context.Context, op, key string, rev uint64) error {
	return b.exec(ctx, op, func(ctx context.Context) error {
		return b.kv.Delete(ctx, key, jetstream.LastRevision(rev))
	})
}
