package store

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// last reads key's value and revision. A bucket with one copy is read
// with a direct get (nats.go's KeyValue.Get); a replicated one is read
// through its stream's leader (nats.go's older JetStream API, whose
// GetLastMsg is not a direct get unless asked), because a direct get may
// be answered by a follower that has not yet applied a write another
// process has just made (a checkpoint saved on one replica read back stale
// on another), and a reader of the store must see every write
// acknowledged before its read.
func (d *durableKV) last(ctx context.Context, key string) ([]byte, uint64, error) {
	if d.leader == nil {
		e, err := d.kv.Get(ctx, key)
		if err != nil {
			return nil, 0, err
		}
		return e.Value(), e.Revision(), nil
	}
	m, err := d.leader.GetLastMsg("KV_"+d.bucket, d.subject+key, nats.Context(ctx))
	if errors.Is(err, nats.ErrMsgNotFound) {
		return nil, 0, jetstream.ErrKeyNotFound
	}
	if err != nil {
		return nil, 0, err
	}
	if m.Header.Get("KV-Operation") != "" || m.Header.Get(jetstream.MarkerReasonHeader) != "" {
		return nil, 0, jetstream.ErrKeyNotFound // deleted, purged or expired
	}
	return m.Data, m.Sequence, nil
}
