package sessionroute

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/switchboard-dev/switchboard/failure"
)

// The session routes live in one JetStream KV bucket: session id -> the
// replica that owns it, each entry with a TTL, renewed while the session
// lives. This file holds all of the bucket's code.

// openBucket opens (or creates) the bucket of session routes.
func openBucket(ctx context.Context, js jetstream.JetStream, bucket string, ttl time.Duration) (jetstream.KeyValue, error) {
	kctx, kcancel := context.WithTimeout(ctx, 10*time.Second)
	defer kcancel()
	kv, err := js.CreateOrUpdateKeyValue(kctx, jetstream.KeyValueConfig{Bucket: bucket,
		Description: "MCP session -> gateway replica", TTL: ttl, History: 1, Storage: jetstream.FileStorage})
	if err != nil {
		return nil, failure.Wrap(failure.Unavailable, failure.SourceBus, fmt.Errorf("sessionroute: bucket %s: %w", bucket, err))
	}
	return kv, nil
}

// bucketName is prefix upper-cased, other than [A-Z0-9_-] as '_', +
// "_MCP_SESSIONS".
func bucketName(prefix string) string {
	var sb strings.Builder
	for _, c := range strings.ToUpper(prefix) {
		if (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' {
			sb.WriteRune(c)
		} else {
			sb.WriteByte('_')
		}
	}
	return sb.String() + "_MCP_SESSIONS"
}

// record makes this replica sid's owner, locally and in the bucket.
func (r *Router) record(ctx context.Context, sid string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), kvTimeout)
	defer cancel()
	if _, err := r.kv.PutString(ctx, sid, r.cfg.Replica); err != nil {
		return err
	}
	r.mu.Lock()
	r.owned[sid] = struct{}{}
	r.mu.Unlock()
	return nil
}

// forget removes sid, locally and from the bucket (bounded by ctx and
// kvTimeout).
func (r *Router) forget(ctx context.Context, sid string) error {
	r.mu.Lock()
	_, ok := r.owned[sid]
	delete(r.owned, sid)
	r.mu.Unlock()
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, kvTimeout)
	defer cancel()
	err := r.kv.Delete(ctx, sid)
	if err != nil {
		r.log.Debug().Err(err).Msg("a session entry left to its TTL")
	}
	return err
}

// renewLoop renews the entries of the sessions alive every TTL/3 and
// removes those of the sessions that ended.
func (r *Router) renewLoop() {
	defer r.wg.Done()
	t := time.NewTicker(r.cfg.TTL / 3)
	defer t.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-t.C:
			r.renew()
		}
	}
}

func (r *Router) renew() {
	r.mu.Lock()
	ids := make([]string, 0, len(r.owned))
	for id := range r.owned {
		ids = append(ids, id)
	}
	r.mu.Unlock()
	var live map[string]bool
	if r.cfg.Sessions != nil {
		live = map[string]bool{}
		for id := range r.cfg.Sessions {
			live[id] = true
		}
	}
	// A failing bucket ends the round (the next renews): a round stays
	// one KV timeout long whatever the number of sessions, and Close
	// does not wait for more.
	for _, id := range ids {
		if live != nil && !live[id] {
			if r.forget(r.ctx, id) != nil {
				return
			}
			continue
		}
		ctx, cancel := context.WithTimeout(r.ctx, kvTimeout)
		_, err := r.kv.PutString(ctx, id, r.cfg.Replica)
		cancel()
		if err != nil {
			r.log.Warn().Err(err).Msg("a session entry could not be renewed")
			return
		}
	}
}

// lookup reads the owner of sid (jetstream.ErrKeyNotFound when it has
// none), bounded by ctx and kvTimeout.
func (r *Router) lookup(ctx context.Context, sid string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, kvTimeout)
	defer cancel()
	e, err := r.kv.Get(ctx, sid)
	if err != nil {
		return "", err
	}
	return string(e.Value()), nil
}

// removeAll removes the entries of ids, within kvTimeout; a failing
// bucket leaves the rest to their TTL.
func (r *Router) removeAll(ids []string) {
	ctx, cancel := context.WithTimeout(context.Background(), kvTimeout)
	defer cancel()
	for _, id := range ids {
		if err := r.kv.Delete(ctx, id); err != nil {
			r.log.Debug().Err(err).Msg("session entries left to their TTL")
			return
		}
	}
}
