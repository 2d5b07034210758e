package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/failure"
)

// AgentConfig configures the agent's stores on JetStream ([OpenAgent]).
// The zero value means the defaults shown; a negative TTL means no expiry.
type AgentConfig struct {
	// Name prefixes the store's buckets: <Name>_SESSIONS, <Name>_RUNS,
	// <Name>_QUESTIONS (KV) and <Name>_BLOBS (object store) (default: the
	// bus's stream name, e.g. SWITCHBOARD).
	Name string
	// Replicas is the number of copies of each bucket in a cluster
	// (default 1; 3 in a 3-node cluster survives the loss of a node).
	Replicas int
	// SessionTTL is how long a session lives after its last write, unless
	// the record sets its own TTL (default 7 days).
	SessionTTL time.Duration
	// RunTTL is how long a run's checkpoint and call records live after
	// the last write (default 7 days); a finished (done or failed) run's
	// checkpoint lives FinishedTTL (default 1 hour).
	RunTTL      time.Duration
	FinishedTTL time.Duration
	// QuestionTTL is how long a question is kept after its deadline (or
	// its answer), so that the run it parks can still read it (default 24
	// hours).
	QuestionTTL time.Duration
	// MaxRecordBytes bounds one encoded record: a session's whole history,
	// a checkpoint (default 8 MiB; a larger write is a Budget failure).
	// Records over the server's maximum message size are kept in the
	// object store.
	MaxRecordBytes int
	// MaxBucketBytes bounds each bucket's storage (default 1 GiB; a write
	// beyond it is a Budget failure).
	MaxBucketBytes int64
	// Logger receives the store's few logs (nil: none).
	Logger *zerolog.Logger
	// Policy runs every bucket operation (retries, a circuit per bucket)
	// and handles its failures (nil: failure.Default, asked at each use).
	Policy failure.Policy
}

// jsStore is agent.Store on JetStream KV buckets: one bucket per kind of
// record, one key per record, one revision kept per key (the latest), a
// per-key TTL renewed by every write, and values over the server's message
// size in the object store. A record's Revision is its own write counter,
// kept in the record; the KV revision (the bucket stream's sequence) is the
// optimistic-concurrency check of every write
// (Nats-Expected-Last-Subject-Sequence).
type jsStore struct {
	b         *jsConn
	cfg       AgentConfig
	sessions  *recBucket
	runs      *recBucket
	questions *recBucket
	blobs     *blobStore
}

var _ agent.Store = (*jsStore)(nil)

// OpenAgent opens (creating them if needed) the buckets of an agent's
// stores on the bus's JetStream: sessions, runs and the inbox, shared by
// every process and replica connected to the same NATS (give it to
// [agent.Durable]). Its records survive restarts of the processes and,
// with file storage (the default), of the servers.
func OpenAgent(ctx context.Context, b *bus.Bus, cfg AgentConfig) (agent.Store, error) {
	if b == nil {
		return nil, failure.New(failure.Config, failure.SourceBus, "store.OpenAgent needs a bus")
	}
	return openAgent(ctx, connOf(b, cfg.Policy, cfg.Logger), cfg, 0)
}

// openAgent is OpenAgent with the inline limit given (0: from the server's
// maximum payload), for the tests of large records.
func openAgent(ctx context.Context, b *jsConn, cfg AgentConfig, inline int) (*jsStore, error) {
	if cfg.Name == "" {
		cfg.Name = b.stream
	}
	cfg.Name = bucketPrefix(cfg.Name)
	if cfg.Replicas <= 0 {
		cfg.Replicas = 1
	}
	def := func(d *time.Duration, v time.Duration) {
		switch {
		case *d == 0:
			*d = v
		case *d < 0:
			*d = 0
		}
	}
	def(&cfg.SessionTTL, 7*24*time.Hour)
	def(&cfg.RunTTL, 7*24*time.Hour)
	def(&cfg.FinishedTTL, time.Hour)
	def(&cfg.QuestionTTL, 24*time.Hour)
	if cfg.MaxRecordBytes <= 0 {
		cfg.MaxRecordBytes = 8 << 20
	}
	if cfg.MaxBucketBytes <= 0 {
		cfg.MaxBucketBytes = 1 << 30
	}
	if inline <= 0 {
		// The bucket value, its subject and headers must fit a message.
		inline = int(b.nc.MaxPayload()) - 4096
	}
	s := &jsStore{b: b, cfg: cfg}
	var err error
	if s.blobs, err = openBlobStore(ctx, b, cfg.Name+"_BLOBS", 0, cfg.Replicas, inline); err != nil {
		return nil, err
	}
	open := func(suffix, desc string) (*recBucket, error) {
		d, err := openDurableKV(ctx, b, cfg.Name+suffix, desc, 0, cfg.Replicas, cfg.MaxBucketBytes, s.blobs)
		if err != nil {
			return nil, err
		}
		return &recBucket{d: d, seen: map[string]seenRev{}}, nil
	}
	if s.sessions, err = open("_SESSIONS", "Switchboard sessions"); err != nil {
		return nil, err
	}
	if s.runs, err = open("_RUNS", "Switchboard run checkpoints and tool-call records"); err != nil {
		return nil, err
	}
	if s.questions, err = open("_QUESTIONS", "Switchboard parked questions (the inbox)"); err != nil {
		return nil, err
	}
	// Objects orphaned by a process that died between its two writes, or
	// whose key expired, go now (a failed sweep is tried at the next open).
	for _, r := range []*recBucket{s.sessions, s.runs, s.questions} {
		if err := r.d.sweep(ctx, sweepMinAge); err != nil {
			b.log.Warn().Err(err).Str("bucket", r.d.bucket).Msg("store: the sweep of orphaned objects failed")
		}
	}
	return s, nil
}

// sweepMinAge spares the objects of writes that may still be in flight.
const sweepMinAge = 10 * time.Minute

// recBucket is a bucket of records that carry their own revision counter
// (1 for a new record, +1 per write). seen remembers, per key, the last
// record revision this process read or wrote and its KV revision, so that
// a write at that revision needs no read first.
type recBucket struct {
	d    *durableKV
	mu   sync.Mutex
	seen map[string]seenRev
}

type seenRev struct{ rev, seq uint64 }

// maxSeen bounds recBucket.seen (it is a cache: cleared when full).
const maxSeen = 10_000

func (r *recBucket) remember(key string, rev, seq uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rev == 0 {
		delete(r.seen, key)
		return
	}
	if len(r.seen) >= maxSeen {
		clear(r.seen)
	}
	r.seen[key] = seenRev{rev, seq}
}

func (r *recBucket) lookup(key string) (seenRev, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.seen[key]
	return s, ok
}

// recHead is what every record has for the revision and expiry rules.
type recHead struct {
	Revision uint64    `json:"revision"`
	Expires  time.Time `json:"expires"`
}

func (h recHead) live(now time.Time) bool { return h.Expires.IsZero() || now.Before(h.Expires) }

// load reads the record of key into v (a pointer to a record type); a
// missing or expired record is NotFound. It returns the record's head and
// KV revision.
func (r *recBucket) load(ctx context.Context, key, what, id string, v any) (recHead, uint64, error) {
	data, seq, err := r.d.get(ctx, key)
	if errors.Is(err, failure.NotFound) {
		return recHead{}, 0, notFound(what, id)
	}
	if err != nil {
		return recHead{}, 0, err
	}
	var h recHead
	if err := json.Unmarshal(data, &h); err != nil {
		return recHead{}, 0, protocolError("store load "+what, err)
	}
	if !h.live(time.Now()) {
		return recHead{}, seq, notFound(what, id)
	}
	if v != nil {
		if err := json.Unmarshal(data, v); err != nil {
			return recHead{}, 0, protocolError("store load "+what, err)
		}
	}
	r.remember(key, h.Revision, seq)
	return h, seq, nil
}

// write stores data (a record whose revision is expect+1) under key if the
// record's revision is expect (0: it must not exist, or have expired), at
// KV revision seq when the caller just read it (0: look it up), with the
// TTL ttl. A stale revision is Conflict, a missing record (expect > 0)
// NotFound.
func (r *recBucket) write(ctx context.Context, key, what, id string, data []byte, expect, seq uint64, ttl time.Duration) error {
	if expect == 0 {
		next, err := r.d.put(ctx, key, data, 0, ttl)
		if errors.Is(err, failure.Conflict) {
			// An expired record not yet removed by the server is free.
			h, cur, lerr := r.load(ctx, key, what, id, nil)
			switch {
			case errors.Is(lerr, failure.NotFound) && cur != 0:
				next, err = r.d.put(ctx, key, data, cur, ttl)
			case lerr == nil:
				return conflict(what, id, fmt.Sprintf("exists already (revision %d)", h.Revision))
			}
		}
		if err != nil {
			return r.writeErr(err, what, id)
		}
		r.remember(key, 1, next)
		return nil
	}
	if seq == 0 {
		if s, ok := r.lookup(key); ok && s.rev == expect {
			seq = s.seq
		}
	}
	if seq != 0 {
		next, err := r.d.put(ctx, key, data, seq, ttl)
		if err == nil {
			r.remember(key, expect+1, next)
			return nil
		}
		if !errors.Is(err, failure.Conflict) {
			return r.writeErr(err, what, id)
		}
		// Someone wrote since: check the revision anew.
	}
	h, cur, err := r.load(ctx, key, what, id, nil)
	if err != nil {
		return err
	}
	if h.Revision != expect {
		return conflict(what, id, fmt.Sprintf("is at revision %d, not %d", h.Revision, expect))
	}
	next, err := r.d.put(ctx, key, data, cur, ttl)
	if err != nil {
		return r.writeErr(err, what, id)
	}
	r.remember(key, expect+1, next)
	return nil
}

// writeErr words a failed write: Conflict for a lost race.
func (r *recBucket) writeErr(err error, what, id string) error {
	if errors.Is(err, failure.Conflict) {
		return conflict(what, id, "was written by someone else first")
	}
	return err
}

// del removes key's record; a missing one is no error.
func (r *recBucket) del(ctx context.Context, key string) error {
	r.remember(key, 0, 0)
	return r.d.del(ctx, key, 0)
}

// scan decodes every live record whose key matches filter, with newT
// giving the value to decode into.
func scan[T any](ctx context.Context, r *recBucket, filter string, now time.Time) ([]T, error) {
	entries, err := r.d.scan(ctx, filter)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(entries))
	for _, data := range entries {
		var h recHead
		if err := json.Unmarshal(data, &h); err != nil {
			return nil, protocolError("store scan", err)
		}
		if !h.live(now) {
			continue
		}
		var v T
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, protocolError("store scan", err)
		}
		out = append(out, v)
	}
	return out, nil
}

// encodeRecord encodes a record, bounded by MaxRecordBytes.
func (s *jsStore) encodeRecord(what string, v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, &failure.Error{Kind: failure.InvalidArgs, Source: failure.SourceBus, Op: "store put " + what, Err: err,
			Message: "the " + what + " record cannot be encoded as JSON"}
	}
	if len(data) > s.cfg.MaxRecordBytes {
		return nil, &failure.Error{Kind: failure.Budget, Source: failure.SourceBus, Op: "store put " + what,
			Message: fmt.Sprintf("the %s record is %d bytes, over the store's limit of %d (AgentConfig.MaxRecordBytes)", what, len(data), s.cfg.MaxRecordBytes)}
	}
	return data, nil
}

func notFound(what, id string) error {
	return &failure.Error{Kind: failure.NotFound, Source: failure.SourceBus, Op: "store " + what,
		Message: fmt.Sprintf("%s %q does not exist", what, id)}
}

func conflict(what, id, detail string) error {
	return &failure.Error{Kind: failure.Conflict, Source: failure.SourceBus, Op: "store " + what,
		Message: fmt.Sprintf("%s %q %s; read it again", what, id, detail)}
}

func invalid(op, msg string) error {
	return &failure.Error{Kind: failure.InvalidArgs, Source: failure.SourceBus, Op: "store " + op, Message: msg}
}

// expiry is now + ttl (zero: never).
func expiry(now time.Time, ttl time.Duration) time.Time {
	if ttl <= 0 {
		return time.Time{}
	}
	return now.Add(ttl)
}
