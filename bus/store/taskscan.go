package store

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/switchboard-dev/switchboard/internal/a2atask"
)

// watchDrain bounds how long a stopped scan waits for its watcher to let
// go (the watcher's delivery blocks until its channel is read).
const watchDrain = 5 * time.Second

// scan reads one window of the bucket, at most ScanCap entries in the
// bucket's order (the order of each key's last write) from revision from
// (0: the start). It returns the live task records among them and the
// revision the next window starts at (0: the scan reached the end).
// Expired tasks met on the way are deleted.
func (s *kvStore) scan(ctx context.Context, from uint64) ([]*a2atask.Record, uint64, error) {
	var recs []*a2atask.Record
	var next uint64
	var stale []*a2atask.Record
	err := s.b.exec(ctx, "list tasks", func(ctx context.Context) error {
		var err error
		recs, stale, next, err = s.scanWindow(ctx, from)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	for _, r := range stale {
		s.forget(ctx, string(r.Task.ID), uint64(r.Version))
	}
	if from > 0 {
		if recs, err = s.current(ctx, recs); err != nil {
			return nil, 0, err
		}
	}
	return recs, next, nil
}

// scanWindow is one attempt of scan: the live records, the expired ones,
// and where the next window starts.
func (s *kvStore) scanWindow(ctx context.Context, from uint64) (live, stale []*a2atask.Record, next uint64, err error) {
	var opts []jetstream.WatchOpt
	if from > 0 {
		// From a revision on, every message counts: in a bucket that keeps
		// one revision per key they are each key's last write.
		opts = append(opts, jetstream.IncludeHistory(), jetstream.ResumeFromRevision(from))
	}
	w, err := s.cfg.KV.WatchAll(ctx, opts...)
	if err != nil {
		return nil, nil, 0, err
	}
	defer stopWatch(w)
	at := map[string]int{} // key -> index in live
	for read := 0; read < s.cfg.ScanCap; read++ {
		var e jetstream.KeyValueEntry
		select {
		case v, ok := <-w.Updates():
			if !ok {
				return nil, nil, 0, errors.New("the bucket's watcher closed during a scan")
			}
			e = v
		case <-ctx.Done():
			return nil, nil, 0, ctx.Err()
		}
		if e == nil { // every entry up to now was read: the end
			return compact(live), stale, 0, nil
		}
		next = e.Revision() + 1
		if e.Delta() == 0 {
			next = 0 // nothing after this one
		}
		s.take(e, at, &live, &stale)
		if next == 0 {
			break
		}
	}
	return compact(live), stale, next, nil
}

// take adds a scanned entry to the window: a task record replaces an
// earlier one of the same key; a delete removes it.
func (s *kvStore) take(e jetstream.KeyValueEntry, at map[string]int, live, stale *[]*a2atask.Record) {
	key := e.Key()
	if !s.taskKey(key) {
		return // not a task: the push configs sharing the bucket
	}
	i, seen := at[key]
	if e.Operation() != jetstream.KeyValuePut {
		if seen {
			(*live)[i] = nil
		}
		return
	}
	r, err := entryRecord(e)
	if err != nil {
		s.cfg.Logger.Warn().Err(err).Str("task", key).Msg("taskstore: skipped a malformed task record")
		return
	}
	if s.expired(r.Written) {
		*stale = append(*stale, r)
		r = nil
	}
	if seen {
		(*live)[i] = r
		return
	}
	if r != nil {
		at[key] = len(*live)
		*live = append(*live, r)
	}
}

// current keeps the records that are still their key's last revision: a
// bucket that keeps several revisions per key also delivers superseded
// ones to a scan that starts at a revision.
func (s *kvStore) current(ctx context.Context, recs []*a2atask.Record) ([]*a2atask.Record, error) {
	h, err := s.historyDepth(ctx)
	if err != nil || h <= 1 {
		return recs, err
	}
	out := recs[:0]
	for _, r := range recs {
		e, err := s.b.get(ctx, "list tasks", string(r.Task.ID))
		if errors.Is(err, errKeyNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if int64(e.Revision()) == r.Version {
			out = append(out, r)
		}
	}
	return out, nil
}

// historyDepth is how many revisions per key the bucket keeps.
func (s *kvStore) historyDepth(ctx context.Context) (int64, error) {
	if h := s.history.Load(); h > 0 {
		return h, nil
	}
	var h int64
	err := s.b.exec(ctx, "bucket status", func(ctx context.Context) error {
		st, err := s.cfg.KV.Status(ctx)
		if err == nil {
			h = st.History()
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	s.history.Store(max(h, 1))
	return max(h, 1), nil
}

// compact drops the records a later delete removed.
func compact(recs []*a2atask.Record) []*a2atask.Record {
	out := recs[:0]
	for _, r := range recs {
		if r != nil {
			out = append(out, r)
		}
	}
	return out
}

// stopWatch stops a watcher and reads what it still delivers until it
// closes, so that its delivery goroutine never stays blocked.
func stopWatch(w jetstream.KeyWatcher) {
	_ = w.Stop()
	t := time.NewTimer(watchDrain)
	defer t.Stop()
	for {
		select {
		case _, ok := <-w.Updates():
			if !ok {
				return
			}
		case <-t.C:
			return
		}
	}
}
