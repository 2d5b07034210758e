package store

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/switchboard-dev/switchboard/bus/internal/wire"
	"github.com/switchboard-dev/switchboard/failure"
)

// durableKV is one JetStream KV bucket of the agent store (agent.go):
// revision-checked writes of opaque values, with values over the server's
// maximum message size kept in the store's object store and a small pointer
// in the bucket. The bucket keeps one revision per key (the latest), and
// its MaxAge, when set, expires a key that has not been written for that
// long.
type durableKV struct {
	b      *jsConn
	kv     jetstream.KeyValue
	stream jetstream.Stream // the bucket's stream
	blobs  *blobStore
	bucket string
	// subject is where the bucket's values are published ("$KV.<bucket>.").
	subject string
	key     failure.Key
	maxAge  time.Duration // the bucket's MaxAge (0: none)
	// leader, for a replicated bucket, reads through the stream's leader
	// (leader.go); nil reads with direct gets.
	leader nats.JetStreamContext
}

// openDurableKV creates or updates bucket (file storage, one revision per
// key, maxAge 0 = no expiry).
func openDurableKV(ctx context.Context, b *jsConn, bucket, desc string, maxAge time.Duration, replicas int, maxBytes int64, blobs *blobStore) (*durableKV, error) {
	d := &durableKV{b: b, blobs: blobs, bucket: bucket, subject: "$KV." + bucket + ".", key: failure.Key{Source: failure.SourceBus, Name: "store:" + bucket}, maxAge: maxAge}
	if replicas > 1 {
		var err error
		if d.leader, err = b.nc.JetStream(); err != nil {
			return nil, b.wrap(err, "open store", "the durable store's bucket "+bucket+" could not be opened")
		}
	}
	err := b.jetStreamAdmin(ctx, d.key, "open store", func(ctx context.Context) error {
		kv, err := b.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket: bucket, Description: desc, History: 1, TTL: maxAge, Replicas: replicas,
			Storage: jetstream.FileStorage, LimitMarkerTTL: markerTTL, MaxBytes: maxBytes,
		})
		if api := (*jetstream.APIError)(nil); errors.As(err, &api) && api.ErrorCode == jsErrStorageExceeded {
			return &failure.Error{Kind: failure.Budget, Source: failure.SourceBus, Name: d.key.Name, Op: "open store", Err: err,
				Message: fmt.Sprintf("JetStream cannot reserve %d bytes for the store's bucket %s (AgentConfig.MaxBucketBytes, default 1 GiB, is reserved per bucket from the server's storage): lower it or give the server more storage", maxBytes, bucket)}
		}
		if err != nil {
			return err
		}
		d.kv = kv
		d.stream, err = b.js.Stream(ctx, "KV_"+bucket)
		return err
	})
	if failure.KindOf(err) == failure.Budget {
		return nil, err
	}
	if err != nil {
		return nil, b.wrap(err, "open store", "the durable store's bucket "+bucket+" could not be opened")
	}
	return d, nil
}

// markerTTL is how long a bucket keeps the marker of a key that expired.
const markerTTL = time.Minute

func (d *durableKV) exec(ctx context.Context, op string, f func(context.Context) error) error {
	return d.b.pol().Execute(ctx, d.key, func(ctx context.Context) error { return d.b.classifyConn(d.full(f(ctx), op), op) })
}

// full makes a write refused for the bucket's limits a Budget failure (the
// server answers 503, which would otherwise be retried as transient).
func (d *durableKV) full(err error, op string) error {
	var api *jetstream.APIError
	if !errors.As(err, &api) {
		return err
	}
	switch {
	case api.ErrorCode == jetstream.JSErrCodeStreamMessageExceedsMaximum,
		api.ErrorCode == jsErrStoreFailed && strings.Contains(api.Description, "maximum"),
		api.ErrorCode == jsErrStorageExceeded:
		return &failure.Error{Kind: failure.Budget, Source: failure.SourceBus, Name: d.bucket, Op: op, Err: err,
			Message: "the store's bucket " + d.bucket + " is full (AgentConfig.MaxBucketBytes) or the record is too large"}
	}
	return err
}

// JetStream error codes of a write refused for a stream's limits.
const (
	jsErrStoreFailed     = 10077 // "maximum bytes exceeded" and the like
	jsErrStorageExceeded = 10047 // insufficient storage resources
)

// get returns key's value and revision; a missing (or expired) key is a
// NotFound failure.
func (d *durableKV) get(ctx context.Context, key string) ([]byte, uint64, error) {
	if err := checkKey(key); err != nil {
		return nil, 0, err
	}
	var last error
	var lastRev uint64
	for range 3 {
		var val []byte
		var rev uint64
		if err := d.exec(ctx, "store get", func(ctx context.Context) (err error) {
			val, rev, err = d.last(ctx, key)
			if errors.Is(err, jetstream.ErrKeyDeleted) {
				err = jetstream.ErrKeyNotFound
			}
			return err
		}); err != nil {
			return nil, 0, err
		}
		if last != nil && rev == lastRev {
			break // the same pointer: its object is gone
		}
		data, err := d.blobs.resolve(ctx, d.bucket+"/"+key, val)
		if err == nil || ctx.Err() != nil || blobName(val) == "" {
			return data, rev, err
		}
		// The object may have been replaced and deleted while it was read:
		// read the key again.
		last, lastRev = err, rev
	}
	return nil, 0, last
}

// put writes value under key if the key's revision is rev (0: the key
// must not exist, or be deleted or expired), and returns the new revision;
// a stale revision or an existing key is a Conflict failure. ttl > 0
// expires the key that long after this write (a per-message TTL).
func (d *durableKV) put(ctx context.Context, key string, value []byte, rev uint64, ttl time.Duration) (uint64, error) {
	if err := checkKey(key); err != nil {
		return 0, err
	}
	id := d.bucket + "/" + key
	stored, obj, err := d.blobs.store(ctx, id, value)
	if err != nil {
		return 0, err
	}
	var next uint64
	err = d.exec(ctx, "store put", func(ctx context.Context) (err error) {
		next, err = d.publish(ctx, key, stored, rev, ttl)
		if rev == 0 {
			next, err = d.createOver(ctx, key, stored, ttl, next, err)
		}
		if isWrongLastSeq(err) {
			err = fmt.Errorf("%w: %w", err, jetstream.ErrKeyRevisionMismatch)
		}
		return err
	})
	if err != nil {
		d.blobs.drop(obj) // the write lost: its object is nobody's
		return 0, err
	}
	d.blobs.replaced(id, obj)
	return next, nil
}

// createOver retries a create (next, err: the first attempt's outcome) over what
// a deleted or expired key left: a marker, or a message the server has not
// yet expired although it is past its age. JetStream removes an expired
// message and writes its marker a moment later, and a create in between is
// refused for the sequence of a message that is already gone, so a few
// bounded retries wait for the marker.
func (d *durableKV) createOver(ctx context.Context, key string, data []byte, ttl time.Duration, next uint64, err error) (uint64, error) {
	for try := 0; try < 5 && isWrongLastSeq(err); try++ {
		seq, found, dead := d.marker(ctx, key)
		switch {
		case found && !dead:
			return 0, err // a live key: a real conflict
		case found:
			next, err = d.publish(ctx, key, data, seq, ttl)
		default: // the message is gone and its marker not yet written
			t := time.NewTimer(time.Duration(try+1) * 20 * time.Millisecond)
			select {
			case <-ctx.Done():
				t.Stop()
				return 0, err
			case <-t.C:
			}
			next, err = d.publish(ctx, key, data, 0, ttl)
		}
	}
	return next, err
}

// marker looks up key's last message: found reports whether there is one,
// and dead whether it marks a deletion or an expiry (or is past its age).
func (d *durableKV) marker(ctx context.Context, key string) (seq uint64, found, dead bool) {
	m, err := d.stream.GetLastMsgForSubject(ctx, d.subject+key)
	if err != nil {
		return 0, false, false
	}
	h := m.Header
	switch {
	case h != nil && (h.Get("KV-Operation") != "" || h.Get(jetstream.MarkerReasonHeader) != ""):
		return m.Sequence, true, true
	case d.maxAge > 0 && time.Since(m.Time) > d.maxAge:
		return m.Sequence, true, true
	case h != nil && h.Get(jetstream.MsgTTLHeader) != "":
		if ttl, perr := time.ParseDuration(h.Get(jetstream.MsgTTLHeader)); perr == nil && time.Since(m.Time) > ttl {
			return m.Sequence, true, true
		}
	}
	return m.Sequence, true, false
}

// publish is one revision-checked write of the bucket's subject for key.
func (d *durableKV) publish(ctx context.Context, key string, data []byte, rev uint64, ttl time.Duration) (uint64, error) {
	opts := []jetstream.PublishOpt{jetstream.WithExpectLastSequencePerSubject(rev)}
	if ttl > 0 {
		opts = append(opts, jetstream.WithMsgTTL(max(ttl, time.Second)))
	}
	ack, err := d.b.js.PublishMsg(ctx, &nats.Msg{Subject: d.subject + key, Data: data}, opts...)
	if err != nil {
		return 0, err
	}
	return ack.Sequence, nil
}

// isWrongLastSeq is JetStream's answer to a stale expected sequence.
func isWrongLastSeq(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) && (api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// del deletes key (rev 0: whatever its revision; a missing key is not an
// error) and its object, if this process knows it.
func (d *durableKV) del(ctx context.Context, key string, rev uint64) error {
	if err := checkKey(key); err != nil {
		return err
	}
	err := d.exec(ctx, "store delete", func(ctx context.Context) error {
		var opts []jetstream.KVDeleteOpt
		if rev != 0 {
			opts = append(opts, jetstream.LastRevision(rev))
		}
		err := d.kv.Purge(ctx, key, opts...)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return nil
		}
		return err
	})
	if err == nil {
		d.blobs.replaced(d.bucket+"/"+key, "")
	}
	return err
}

// scan returns the values of the keys matching filter (a subject pattern),
// read with one watcher rather than a read per key.
func (d *durableKV) scan(ctx context.Context, filter string) ([][]byte, error) {
	var stored []jetstream.KeyValueEntry
	err := d.exec(ctx, "store scan", func(ctx context.Context) error {
		stored = stored[:0]
		w, err := d.kv.WatchFiltered(ctx, []string{filter}, jetstream.IgnoreDeletes())
		if err != nil {
			return err
		}
		defer func() { _ = w.Stop() }()
		for {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case e, ok := <-w.Updates():
				if !ok {
					return errors.New("the watcher closed")
				}
				if e == nil { // the current values are all in
					return nil
				}
				stored = append(stored, e)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	out := make([][]byte, 0, len(stored))
	for _, e := range stored {
		if e.Operation() != jetstream.KeyValuePut {
			continue
		}
		data, err := d.blobs.resolve(ctx, d.bucket+"/"+e.Key(), e.Value())
		if errors.Is(err, failure.NotFound) {
			continue // replaced or expired meanwhile
		}
		if err != nil {
			return nil, err
		}
		out = append(out, data)
	}
	return out, nil
}

// keys lists the keys matching filter (a subject pattern, e.g. "q.>").
func (d *durableKV) keys(ctx context.Context, filter string) ([]string, error) {
	var keys []string
	err := d.exec(ctx, "store list", func(ctx context.Context) error {
		keys = keys[:0]
		l, err := d.kv.ListKeysFiltered(ctx, filter)
		if err != nil {
			if errors.Is(err, jetstream.ErrNoKeysFound) {
				return nil
			}
			return err
		}
		defer func() { _ = l.Stop() }()
		for k := range l.Keys() {
			keys = append(keys, k)
		}
		return nil
	})
	return keys, err
}

// sweep deletes the objects of this bucket's keys that no key points to
// any more (their key expired or was replaced by another process), if they
// are older than minAge (a write in flight has put its object but not yet
// its key).
func (d *durableKV) sweep(ctx context.Context, minAge time.Duration) error {
	var infos []*jetstream.ObjectInfo
	err := d.b.pol().Execute(ctx, d.blobs.key, func(ctx context.Context) (err error) {
		infos, err = d.blobs.obs.List(ctx)
		if errors.Is(err, jetstream.ErrNoObjectsFound) {
			infos, err = nil, nil
		}
		return d.b.classifyConn(err, "store sweep")
	})
	if err != nil {
		return err
	}
	pre := d.bucket + "/"
	for _, info := range infos {
		rest, ok := strings.CutPrefix(info.Name, pre)
		key, _, ok2 := strings.Cut(rest, "/")
		if !ok || !ok2 || time.Since(info.ModTime) < minAge {
			continue
		}
		e, err := d.kv.Get(ctx, key)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrKeyDeleted):
		case err != nil:
			return d.b.classifyConn(err, "store sweep")
		case blobName(e.Value()) == info.Name:
			continue
		}
		d.blobs.drop(info.Name)
	}
	return nil
}

// maxKeyBytes bounds a key (ids of sessions, runs, calls and questions
// come from outside; a subject must fit NATS's control line).
const maxKeyBytes = 1024

func checkKey(key string) error {
	if len(key) > maxKeyBytes {
		return &failure.Error{Kind: failure.InvalidArgs, Source: failure.SourceBus, Op: "store",
			Message: fmt.Sprintf("an id is too long (its key is %d bytes, the limit %d)", len(key), maxKeyBytes)}
	}
	return nil
}

// storeKey makes a KV key of an id given from outside (wire.Key).
func storeKey(id string) string { return wire.Key(id) }

// idOfKey is the inverse of storeKey.
func idOfKey(key string) (string, error) {
	if !strings.HasPrefix(key, "=") {
		return key, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(key[1:])
	if err != nil {
		return "", protocolError("store list", fmt.Errorf("malformed key %q", key))
	}
	return string(b), nil
}
