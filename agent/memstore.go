package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/failure"
)

// MemoryStoreOptions configure NewMemoryStore. Zero fields take the
// defaults shown; a negative TTL means no expiry.
type MemoryStoreOptions struct {
	// SessionTTL is how long a session lives after its last write, unless
	// the record sets its own TTL (default 7 days).
	SessionTTL time.Duration
	// RunTTL is how long a run's checkpoint and call records live after the
	// last checkpoint (default 7 days); a finished run's live FinishedTTL
	// (default 1 hour).
	RunTTL      time.Duration
	FinishedTTL time.Duration
	// MaxSessions, MaxRuns and MaxQuestions bound the records kept (default
	// 10,000 each); MaxCallsPerRun the call records of one run (default
	// 10,000).
	MaxSessions    int
	MaxRuns        int
	MaxQuestions   int
	MaxCallsPerRun int
	// MaxRecordBytes bounds one encoded session or checkpoint (default 8
	// MiB).
	MaxRecordBytes int
	// Now is the clock (default time.Now); tests move it.
	Now func() time.Time
}

// memStore is the in-memory Store. Records are kept encoded, so that what
// is stored is what a shared store would hold, and callers never share
// memory with it.
type memStore struct {
	o         MemoryStoreOptions
	mu        sync.Mutex
	sessions  map[string]*memRec
	runs      map[string]*memRec
	calls     map[string][]memCall
	questions map[string]*memRec
	lastSweep time.Time
}

type memRec struct {
	data    []byte
	rev     uint64
	expires time.Time // zero: never
}

type memCall struct {
	call string
	data []byte
}

// NewMemoryStore returns a Store that keeps its records in this process's
// memory: sessions and runs survive a new Agent, not a new process.
func NewMemoryStore(o MemoryStoreOptions) Store {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&o.SessionTTL, 7*24*time.Hour)
	def(&o.RunTTL, 7*24*time.Hour)
	def(&o.FinishedTTL, time.Hour)
	for _, n := range []*int{&o.MaxSessions, &o.MaxRuns, &o.MaxQuestions, &o.MaxCallsPerRun} {
		if *n <= 0 {
			*n = 10_000
		}
	}
	if o.MaxRecordBytes <= 0 {
		o.MaxRecordBytes = 8 << 20
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &memStore{o: o, sessions: map[string]*memRec{}, runs: map[string]*memRec{},
		calls: map[string][]memCall{}, questions: map[string]*memRec{}}
}

func storeErr(kind failure.Kind, op, format string, args ...any) *failure.Error {
	return &failure.Error{Kind: kind, Source: failure.SourceAgent, Op: op, Message: fmt.Sprintf(format, args...)}
}

func expiry(now time.Time, ttl time.Duration) time.Time {
	if ttl < 0 {
		return time.Time{}
	}
	return now.Add(ttl)
}

func (r *memRec) live(now time.Time) bool {
	return r != nil && (r.expires.IsZero() || now.Before(r.expires))
}

// sweep drops expired records, at most once a second.
func (m *memStore) sweep(now time.Time, force bool) {
	if !force && now.Sub(m.lastSweep) < time.Second {
		return
	}
	m.lastSweep = now
	for id, r := range m.sessions {
		if !r.live(now) {
			delete(m.sessions, id)
		}
	}
	for id, r := range m.runs {
		if !r.live(now) {
			delete(m.runs, id)
			delete(m.calls, id)
		}
	}
	for id, r := range m.questions {
		if !r.live(now) {
			delete(m.questions, id)
		}
	}
}

func (m *memStore) encode(op string, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, &failure.Error{Kind: failure.InvalidArgs, Source: failure.SourceAgent, Op: op, Err: err,
			Message: "the record cannot be encoded as JSON"}
	}
	if len(b) > m.o.MaxRecordBytes {
		return nil, storeErr(failure.Budget, op, "the record is %d bytes, over the store's limit of %d", len(b), m.o.MaxRecordBytes)
	}
	return b, nil
}

func decode[T any](op string, b []byte) (*T, error) {
	v := new(T)
	if err := json.Unmarshal(b, v); err != nil {
		return nil, &failure.Error{Kind: failure.Internal, Source: failure.SourceAgent, Op: op, Err: err,
			Message: "a stored record cannot be decoded"}
	}
	return v, nil
}

// checkRev applies the revision rule to the current record cur.
func checkRev(op, what, id string, cur *memRec, now time.Time, expect uint64) error {
	switch {
	case expect == 0 && cur.live(now):
		return storeErr(failure.Conflict, op, "%s %q exists already (revision %d)", what, id, cur.rev)
	case expect != 0 && !cur.live(now):
		return storeErr(failure.NotFound, op, "%s %q does not exist", what, id)
	case expect != 0 && cur.rev != expect:
		return storeErr(failure.Conflict, op, "%s %q is at revision %d, not %d", what, id, cur.rev, expect)
	}
	return nil
}

func needID(op, what, id string) error {
	if id == "" {
		return storeErr(failure.InvalidArgs, op, "the %s id is empty", what)
	}
	return nil
}

func (m *memStore) LoadSession(_ context.Context, id string) (*SessionRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.sessions[id]
	if !r.live(m.o.Now()) {
		return nil, storeErr(failure.NotFound, "load session", "session %q does not exist", id)
	}
	return decode[SessionRecord]("load session", r.data)
}

func (m *memStore) PutSession(_ context.Context, rec *SessionRecord, expect uint64) (uint64, error) {
	if rec == nil {
		return 0, storeErr(failure.InvalidArgs, "put session", "the session record is nil")
	}
	if err := needID("put session", "session", rec.ID); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.o.Now()
	cur := m.sessions[rec.ID]
	if err := checkRev("put session", "session", rec.ID, cur, now, expect); err != nil {
		return 0, err
	}
	c := *rec
	if expect == 0 {
		c.Created = now
	} else if old, err := decode[SessionRecord]("put session", cur.data); err == nil {
		c.Created = old.Created
	}
	return m.writeSession(&c, cur, now, expect)
}

func (m *memStore) AppendSession(_ context.Context, delta *SessionRecord, expect uint64) (uint64, error) {
	if delta == nil {
		return 0, storeErr(failure.InvalidArgs, "append session", "the session record is nil")
	}
	if err := needID("append session", "session", delta.ID); err != nil {
		return 0, err
	}
	if expect == 0 {
		return 0, storeErr(failure.InvalidArgs, "append session", "append needs the session's revision")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.o.Now()
	cur := m.sessions[delta.ID]
	if err := checkRev("append session", "session", delta.ID, cur, now, expect); err != nil {
		return 0, err
	}
	rec, err := decode[SessionRecord]("append session", cur.data)
	if err != nil {
		return 0, err
	}
	rec.History = append(rec.History, delta.History...)
	for _, g := range delta.Grants {
		if !slices.Contains(rec.Grants, g) {
			rec.Grants = append(rec.Grants, g)
		}
	}
	rec.Run = delta.Run
	if delta.TTL != 0 {
		rec.TTL = delta.TTL
	}
	return m.writeSession(rec, cur, now, expect)
}

func (m *memStore) writeSession(rec *SessionRecord, cur *memRec, now time.Time, expect uint64) (uint64, error) {
	if expect == 0 {
		m.sweep(now, len(m.sessions) >= m.o.MaxSessions)
		if len(m.sessions) >= m.o.MaxSessions {
			return 0, storeErr(failure.Budget, "put session", "the store holds %d sessions, its limit", m.o.MaxSessions)
		}
	}
	ttl := rec.TTL
	if ttl == 0 {
		ttl = m.o.SessionTTL
	}
	rec.V, rec.Revision, rec.Updated = recordVersion, expect+1, now
	rec.Expires = expiry(now, ttl)
	b, err := m.encode("put session", rec)
	if err != nil {
		return 0, err
	}
	m.sessions[rec.ID] = &memRec{data: b, rev: rec.Revision, expires: rec.Expires}
	return rec.Revision, nil
}

func (m *memStore) ListSessions(context.Context) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return liveKeys(m.sessions, m.o.Now()), nil
}

func liveKeys(recs map[string]*memRec, now time.Time) []string {
	ids := make([]string, 0, len(recs))
	for id, r := range recs {
		if r.live(now) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

func (m *memStore) DeleteSession(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.sessions, id)
	return nil
}
