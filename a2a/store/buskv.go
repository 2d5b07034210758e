package store

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/switchboard-dev/switchboard/bus"
)

// BusKV adapts a bucket of the bus package (values are the task records as
// raw JSON) to KV. Open it with bus.OpenKV[json.RawMessage].
func BusKV(kv *bus.KV[json.RawMessage]) KV { return busKV{kv} }

type busKV struct{ kv *bus.KV[json.RawMessage] }

func (b busKV) Get(ctx context.Context, key string) ([]byte, uint64, error) {
	e, err := b.kv.Get(ctx, key)
	if errors.Is(err, bus.ErrNotFound) {
		return nil, 0, ErrKeyNotFound
	}
	if err != nil {
		return nil, 0, err
	}
	if e.Deleted {
		return nil, 0, ErrKeyNotFound
	}
	return e.Value, e.Revision, nil
}

func (b busKV) Create(ctx context.Context, key string, v []byte) (uint64, error) {
	rev, err := b.kv.Create(ctx, key, json.RawMessage(v))
	if errors.Is(err, bus.ErrConflict) {
		return 0, ErrKeyExists
	}
	return rev, err
}

func (b busKV) Update(ctx context.Context, key string, v []byte, rev uint64) (uint64, error) {
	n, err := b.kv.Update(ctx, key, json.RawMessage(v), rev)
	if errors.Is(err, bus.ErrConflict) {
		return 0, ErrRevisionMismatch
	}
	return n, err
}

func (b busKV) Keys(ctx context.Context) ([]string, error) { return b.kv.Keys(ctx) }
