package worker

import (
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/switchboard-dev/switchboard/bus/internal/wire"
)

// Orphans: a worker serving a durable agent publishes, every beat
// interval, the runs it is running (its jobs' and the orphans it resumes)
// on <prefix>.work.<name>.alive; every such worker listens. A run of the
// pool is alive while a heartbeat listed it less than max(OrphanAfter, 3
// beat intervals) ago. A worker resumes a run as an orphan only when (1)
// its own heartbeats come back to it (its connection works) and it has
// listened for OrphanAfter, (2) no heartbeat listed the run for that long,
// and (3) two of its scans in a row saw the run's checkpoint at the same
// revision (a run that writes is alive whatever its heartbeats). The resume is
// conditional on that revision, so of several workers judging the same
// orphan, one takes it and the others get a Conflict (sweep.go).

// Orphan defaults and bounds.
const (
	defaultOrphanAfter = 15 * time.Second
	defaultMaxOrphans  = 2
	minBeat            = 20 * time.Millisecond
	maxBeat            = 5 * time.Second
	// maxBeatRuns bounds the runs of one heartbeat message (a worker with
	// more sends several); a message listing more is cut there.
	maxBeatRuns = 256
	// maxTracked bounds the runs a worker tracks; when full, it judges no
	// run an orphan (it may not know who is alive).
	maxTracked = 1 << 16
)

// beatWire is a durable worker's heartbeat on <prefix>.work.<name>.alive.
type beatWire struct {
	V          int      `json:"v"`
	Worker     string   `json:"worker"`
	IntervalMS int64    `json:"interval_ms"`
	Runs       []string `json:"runs,omitempty"`
}

// decodeBeat parses a heartbeat: a worker id is required, and its runs are
// cut at maxBeatRuns.
func decodeBeat(data []byte) (beatWire, error) {
	var w beatWire
	if err := decode(data, "decode heartbeat", &w.V, &w); err != nil {
		return beatWire{}, err
	}
	if w.Worker == "" {
		return beatWire{}, protocolError("decode heartbeat", errors.New("the heartbeat names no worker"))
	}
	w.Runs = w.Runs[:min(len(w.Runs), maxBeatRuns)]
	return w, nil
}

// liveness publishes this worker's heartbeats and tracks everyone's.
type liveness struct {
	s        *Server
	subject  string
	after    time.Duration // how long unlisted means gone (OrphanAfter, or its default)
	interval time.Duration
	sub      *nats.Subscription

	mu sync.Mutex
	// since is when this worker's view became complete (it started
	// listening, or its own heartbeats came back after a gap); lastOwn is
	// when its own last heartbeat came back.
	since, lastOwn time.Time
	until          map[string]time.Time // run → alive until
	full           bool

	stopOnce   sync.Once
	stopC, end chan struct{}
}

// startLiveness subscribes to the heartbeats and starts beating.
func (s *Server) startLiveness(after time.Duration) (*liveness, error) {
	l := &liveness{s: s, subject: s.subj.alive, after: after, interval: min(max(after/5, minBeat), maxBeat),
		since: time.Now(), until: map[string]time.Time{}, stopC: make(chan struct{}), end: make(chan struct{})}
	var err error
	if l.sub, err = s.nc.Subscribe(l.subject, l.onBeat); err != nil {
		return nil, err
	}
	go l.beat()
	return l, nil
}

// stop ends the heartbeats (nil-safe, idempotent).
func (l *liveness) stop() {
	if l == nil {
		return
	}
	l.stopOnce.Do(func() {
		close(l.stopC)
		<-l.end
		_ = l.sub.Unsubscribe()
	})
}

// beat publishes this worker's runs every interval until stopped.
func (l *liveness) beat() {
	defer close(l.end)
	t := time.NewTicker(l.interval)
	defer t.Stop()
	for {
		l.publish()
		select {
		case <-l.stopC:
			return
		case <-t.C:
		}
	}
}

func (l *liveness) publish() {
	runs := l.s.listedRuns()
	for first := true; first || len(runs) > 0; first = false {
		part := runs[:min(len(runs), maxBeatRuns)]
		runs = runs[len(part):]
		data, _ := json.Marshal(beatWire{V: wire.Version, Worker: l.s.cfg.ID, IntervalMS: l.interval.Milliseconds(), Runs: part})
		if err := l.s.nc.Publish(l.subject, data); err != nil {
			l.s.log.Debug().Err(err).Msg("heartbeat not sent")
			return
		}
	}
}

// onBeat records a heartbeat (on the subscription's goroutine).
func (l *liveness) onBeat(msg *nats.Msg) {
	b, err := decodeBeat(msg.Data)
	if err != nil {
		l.s.log.Debug().Err(err).Msg("a malformed heartbeat was ignored")
		return
	}
	now := time.Now()
	iv := min(max(time.Duration(b.IntervalMS)*time.Millisecond, minBeat), maxBeat)
	until := now.Add(max(l.after, 3*iv))
	l.mu.Lock()
	defer l.mu.Unlock()
	if b.Worker == l.s.cfg.ID {
		if l.lastOwn.IsZero() || now.Sub(l.lastOwn) > 3*l.interval {
			l.since = now // a gap: what was missed is unknown
		}
		l.lastOwn = now
		for run, u := range l.until {
			if u.Before(now) {
				delete(l.until, run)
			}
		}
		l.full = len(l.until) >= maxTracked
	}
	for _, run := range b.Runs {
		if _, ok := l.until[run]; !ok && len(l.until) >= maxTracked {
			l.full = true
			continue
		}
		l.until[run] = until
	}
}

// listed reports whether a heartbeat listed run recently: it is alive.
func (l *liveness) listed(run string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return now.Before(l.until[run])
}

// fresh reports whether this worker's view of the heartbeats is complete:
// its own come back, and it has listened for the orphan timeout.
func (l *liveness) fresh(now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.full && !l.lastOwn.IsZero() && now.Sub(l.lastOwn) <= 3*l.interval && now.Sub(l.since) >= l.after
}

// orphaned reports whether run may be an orphan as far as heartbeats
// tell: the view is complete and no heartbeat listed it for the timeout.
func (l *liveness) orphaned(run string, now time.Time) bool {
	return l.fresh(now) && !l.listed(run, now)
}

// listedRuns are the runs this worker runs: its jobs' durable runs and
// the orphans it resumes.
func (s *Server) listedRuns() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	runs := make([]string, 0, len(s.jobs)+len(s.orphans))
	for _, j := range s.jobs {
		if j.slot != nil {
			if r := j.slot.taken(); r != "" {
				runs = append(runs, r)
			}
		}
	}
	for run := range s.orphans {
		runs = append(runs, run)
	}
	return runs
}

// stability tracks, on this worker's clock, since when a run's checkpoint
// has been seen at one revision.
type stability struct {
	rev   uint64
	since time.Time
}

// stableFor records a sighting of revision rev and reports whether the
// run has been at it for d.
func (st *stability) stableFor(rev uint64, now time.Time, d time.Duration) bool {
	if st.since.IsZero() || st.rev != rev {
		st.rev, st.since = rev, now
	}
	return now.Sub(st.since) >= d
}
