package store

import (
	"context"
	"slices"
	"sort"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
)

// Sessions live in <Name>_SESSIONS, one key per session (storeKey of its
// id), the whole record in the value.

// LoadSession returns the session id.
func (s *jsStore) LoadSession(ctx context.Context, id string) (*agent.SessionRecord, error) {
	if id == "" {
		return nil, invalid("load session", "the session id is empty")
	}
	rec := new(agent.SessionRecord)
	if _, _, err := s.sessions.load(ctx, storeKey(id), "session", id, rec); err != nil {
		return nil, err
	}
	return rec, nil
}

// PutSession replaces (or, with expect 0, creates) the session rec.ID.
func (s *jsStore) PutSession(ctx context.Context, rec *agent.SessionRecord, expect uint64) (uint64, error) {
	if rec == nil {
		return 0, invalid("put session", "the session record is nil")
	}
	if rec.ID == "" {
		return 0, invalid("put session", "the session id is empty")
	}
	key := storeKey(rec.ID)
	c := *rec
	now := time.Now()
	c.Created = now
	var seq uint64
	if expect != 0 {
		var old agent.SessionRecord
		h, cur, err := s.sessions.load(ctx, key, "session", rec.ID, &old)
		if err != nil {
			return 0, err
		}
		if h.Revision != expect {
			return 0, conflict("session", rec.ID, "is at a newer revision")
		}
		c.Created, seq = old.Created, cur
	}
	return s.writeSession(ctx, &c, expect, seq, now)
}

// AppendSession appends delta to the session delta.ID (see agent.SessionStore).
func (s *jsStore) AppendSession(ctx context.Context, delta *agent.SessionRecord, expect uint64) (uint64, error) {
	if delta == nil {
		return 0, invalid("append session", "the session record is nil")
	}
	if delta.ID == "" {
		return 0, invalid("append session", "the session id is empty")
	}
	if expect == 0 {
		return 0, invalid("append session", "append needs the session's revision")
	}
	var rec agent.SessionRecord
	h, seq, err := s.sessions.load(ctx, storeKey(delta.ID), "session", delta.ID, &rec)
	if err != nil {
		return 0, err
	}
	if h.Revision != expect {
		return 0, conflict("session", delta.ID, "is at a newer revision")
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
	return s.writeSession(ctx, &rec, expect, seq, time.Now())
}

func (s *jsStore) writeSession(ctx context.Context, rec *agent.SessionRecord, expect, seq uint64, now time.Time) (uint64, error) {
	ttl := rec.TTL
	if ttl == 0 {
		ttl = s.cfg.SessionTTL
	}
	rec.V, rec.Revision, rec.Updated, rec.Expires = 1, expect+1, now, expiry(now, ttl)
	data, err := s.encodeRecord("session", rec)
	if err != nil {
		return 0, err
	}
	if err := s.sessions.write(ctx, storeKey(rec.ID), "session", rec.ID, data, expect, seq, ttl); err != nil {
		return 0, err
	}
	return rec.Revision, nil
}

// ListSessions returns the ids of the sessions that have not expired.
func (s *jsStore) ListSessions(ctx context.Context) ([]string, error) {
	recs, err := scan[struct {
		ID string `json:"id"`
	}](ctx, s.sessions, ">", time.Now())
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.ID
	}
	sort.Strings(ids)
	return ids, nil
}

// DeleteSession removes a session.
func (s *jsStore) DeleteSession(ctx context.Context, id string) error {
	if id == "" {
		return invalid("delete session", "the session id is empty")
	}
	return s.sessions.del(ctx, storeKey(id))
}
