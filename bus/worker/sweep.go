package worker

import (
	"context"
	"errors"
	mrand "math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus/internal/wire"
	"github.com/switchboard-dev/switchboard/failure"
)

// Sweeper bounds.
const (
	// parkedRecheck bounds how long a parked run with a pending question
	// is left unread (it is read again at its earliest deadline, or then).
	parkedRecheck = 10 * time.Minute
	// storeOpTimeout bounds one store read of a scan.
	storeOpTimeout = 10 * time.Second
	// minScan bounds the scan interval from below.
	minScan = 10 * time.Millisecond
	// maxRefusals bounds the resumes of one orphan that fail at once.
	maxRefusals = 3
)

// sweeper scans the store of a durable agent for runs of this pool whose
// worker is gone (and whose caller did not resume them), and for parked
// runs whose questions are all answered or expired, and resumes them here.
// Its caches are touched by its scanning goroutine only; each is pruned to
// the runs the store lists.
type sweeper struct {
	s     *Server
	st    *agent.Durability
	after time.Duration
	scan  time.Duration
	max   int

	finished map[string]bool      // done, failed, or another agent's: never an orphan again
	parked   map[string]time.Time // a parked run with a pending question: read again then
	seen     map[string]*stability

	mu sync.Mutex
	// refused counts, per run, the resumes that failed at their start with
	// something else than another process taking the run: after
	// maxRefusals the run is left to a supervisor.
	refused map[string]int

	stopC, end chan struct{}
}

// startDurable starts the heartbeats and the sweeper of a worker whose
// runner is durable (nothing for other runners).
func (s *Server) startDurable() error {
	st := s.store
	if s.resume == nil || st == nil {
		return nil
	}
	after := s.cfg.OrphanAfter
	if after == 0 {
		after = defaultOrphanAfter
	}
	sweeping := after > 0
	if !sweeping {
		after = defaultOrphanAfter
	}
	var err error
	if s.live, err = s.startLiveness(after); err != nil {
		return err
	}
	if !sweeping {
		return nil
	}
	w := &sweeper{s: s, st: st, after: after, scan: s.cfg.OrphanScan, max: s.cfg.MaxOrphans,
		finished: map[string]bool{}, parked: map[string]time.Time{}, seen: map[string]*stability{}, refused: map[string]int{},
		stopC: make(chan struct{}), end: make(chan struct{})}
	if w.scan <= 0 {
		w.scan = after / 3
	}
	w.scan = max(w.scan, minScan)
	if w.max <= 0 {
		w.max = defaultMaxOrphans
	}
	w.max = min(w.max, s.cfg.MaxConcurrent)
	s.sweep = w
	go w.loop()
	return nil
}

// stop ends the scans (nil-safe); orphans being resumed go on as jobs do.
func (w *sweeper) stop() {
	if w == nil {
		return
	}
	select {
	case <-w.stopC:
	default:
		close(w.stopC)
	}
	<-w.end
}

func (w *sweeper) loop() {
	defer close(w.end)
	ctx, cancel := context.WithCancel(w.s.base)
	defer cancel()
	go func() {
		select {
		case <-w.stopC:
			cancel()
		case <-ctx.Done():
		}
	}()
	for {
		// Jittered by ±25%, so that workers started together do not scan
		// together.
		d := w.scan*3/4 + time.Duration(mrand.Int64N(int64(w.scan/2)+1))
		t := time.NewTimer(d)
		select {
		case <-w.stopC:
			t.Stop()
			return
		case <-t.C:
		}
		w.sweep(ctx)
	}
}

// sweep is one scan: it reads the checkpoints it must (not those of runs
// known finished, of parked runs before their next deadline, or of runs a
// heartbeat lists) and resumes the orphans it may, up to MaxOrphans.
func (w *sweeper) sweep(ctx context.Context) {
	if !w.s.live.fresh(time.Now()) {
		return
	}
	sctx, cancel := context.WithTimeout(ctx, max(w.scan, storeOpTimeout))
	defer cancel()
	ids, err := w.list(sctx)
	if err != nil {
		w.s.log.Debug().Err(err).Msg("orphan scan: the runs could not be listed")
		return
	}
	offset := 0
	if len(ids) > 0 {
		offset = mrand.IntN(len(ids))
	}
	for k := range ids {
		if sctx.Err() != nil || !w.room() {
			return
		}
		id := ids[(offset+k)%len(ids)]
		now := time.Now()
		if w.finished[id] || now.Before(w.parked[id]) {
			continue
		}
		if w.s.live.listed(id, now) {
			delete(w.seen, id)
			continue
		}
		lctx, lcancel := context.WithTimeout(sctx, storeOpTimeout)
		cp, err := w.st.Runs.LoadCheckpoint(lctx, id)
		switch {
		case err != nil:
		case cp.State == agent.RunParked:
			err = w.parkedDue(lctx, cp, now)
		case cp.State == agent.RunDone || cp.State == agent.RunFailed:
			err = w.endRecorded(lctx, cp)
		}
		lcancel()
		if err != nil || !w.candidate(cp, time.Now()) {
			continue
		}
		if !w.take(cp) {
			return // full meanwhile: the next scan (or another worker) takes it
		}
	}
}

// list returns the store's runs, and prunes the caches to them.
func (w *sweeper) list(ctx context.Context) ([]string, error) {
	ids, err := w.st.Runs.ListRuns(ctx)
	if err != nil {
		return nil, err
	}
	keep := make(map[string]bool, len(ids))
	for _, id := range ids {
		keep[id] = true
	}
	for id := range w.finished {
		if !keep[id] {
			delete(w.finished, id)
		}
	}
	for id := range w.parked {
		if !keep[id] {
			delete(w.parked, id)
		}
	}
	for id := range w.seen {
		if !keep[id] {
			delete(w.seen, id)
		}
	}
	w.mu.Lock()
	for id, n := range w.refused {
		switch {
		case !keep[id]:
			delete(w.refused, id)
		case n >= maxRefusals:
			w.finished[id] = true
		}
	}
	w.mu.Unlock()
	return ids, nil
}

// errPending marks a parked run with a question still pending.
var errPending = errors.New("worker: a question of the parked run is pending")

// parkedDue returns nil when every question of the parked run cp is
// answered or past its deadline, else errPending, remembering when to look
// again (its earliest pending deadline).
func (w *sweeper) parkedDue(ctx context.Context, cp *agent.Checkpoint, now time.Time) error {
	ids := slices.Clone(cp.Questions)
	if len(ids) == 0 && cp.Question != "" {
		ids = []string{cp.Question}
	}
	next := now.Add(parkedRecheck)
	pending := false
	for _, id := range ids {
		if w.st.Inbox == nil {
			break // not this agent's: it cannot resume it (the resume says so)
		}
		q, err := w.st.Inbox.LoadQuestion(ctx, id)
		switch {
		case errors.Is(err, failure.NotFound):
			continue // expired long ago: the resume reports it
		case err != nil:
			return err
		case q.Answer == nil && now.Before(q.Deadline):
			pending = true
			next = minTime(next, q.Deadline)
		}
	}
	if pending {
		w.parked[cp.Run] = next
		delete(w.seen, cp.Run)
		return errPending
	}
	delete(w.parked, cp.Run)
	return nil
}

// errRecorded marks a finished run whose end its session has.
var errRecorded = errors.New("worker: the finished run's end is recorded")

// endRecorded returns errRecorded (and remembers the run as finished) when
// the session of the finished run cp no longer holds it, and nil when it
// does: the run's process died between its last two writes, and a resume
// (which replays the end) records it.
func (w *sweeper) endRecorded(ctx context.Context, cp *agent.Checkpoint) error {
	rec, err := w.st.Sessions.LoadSession(ctx, cp.Session)
	switch {
	case errors.Is(err, failure.NotFound) || err == nil && rec.Run != cp.Run:
		w.finished[cp.Run] = true
		delete(w.seen, cp.Run)
		return errRecorded
	case err != nil:
		return err
	}
	return nil
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// candidate classifies a checkpoint and reports whether its run is an
// orphan to resume now: a parked run whose questions are resolved, or a
// run of this pool, running or finished but not recorded in its session,
// listed by no heartbeat for OrphanAfter; each seen at one revision by two
// scans in a row.
func (w *sweeper) candidate(cp *agent.Checkpoint, now time.Time) bool {
	if cp.Agent != w.s.r.Name() {
		w.finished[cp.Run] = true
		return false
	}
	switch cp.State {
	case agent.RunParked:
	case agent.RunRunning, agent.RunDone, agent.RunFailed: // a finished one whose session still holds it (endRecorded)
		if pool, _, ok := ownerOf(cp.Owner); !ok || pool != wire.Token(w.s.cfg.Name) {
			delete(w.seen, cp.Run) // a run outside this pool: its own resumes it
			if cp.State != agent.RunRunning {
				w.finished[cp.Run] = true
			}
			return false
		}
	default:
		return false
	}
	st := w.seen[cp.Run]
	if st == nil {
		st = &stability{}
		w.seen[cp.Run] = st
	}
	if cp.State == agent.RunParked {
		// Two scans in a row saw this revision (they are at least 3/4 of
		// a scan interval apart).
		return st.stableFor(cp.Revision, now, w.scan/2)
	}
	// A run seen at one revision for OrphanAfter: a run no heartbeat has
	// listed yet (just started or resumed, its worker's next beat not
	// sent) is not taken for a dead one.
	return st.stableFor(cp.Revision, now, w.after) && w.s.live.orphaned(cp.Run, now)
}

// room reports whether this worker may take one more orphan (a hint:
// take decides).
func (w *sweeper) room() bool {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	return w.roomLocked()
}

// roomLocked is room with the Server's mu held: the orphan would be
// within MaxOrphans and, with the jobs, within MaxConcurrent (the bound
// onStart checks under the same lock).
func (w *sweeper) roomLocked() bool {
	s := w.s
	return !s.stopping && len(s.orphans) < w.max && len(s.jobs)+len(s.orphans) < s.cfg.MaxConcurrent
}

// take resumes the orphan cp on a goroutine of its own, owned by the
// Server (Close waits for it; stopping hands it over), in a slot it takes
// as a job does: it reports false, taking nothing, when the worker has no
// room (jobs came while the scan read the store) or is stopping. A run
// being resumed here already is not taken again (true: the scan goes on).
func (w *sweeper) take(cp *agent.Checkpoint) bool {
	s := w.s
	sl := newSlot(wire.Token(s.cfg.Name), wire.Token(s.cfg.ID))
	sl.expect(cp.Run, cp.Revision)
	s.mu.Lock()
	if s.orphans[cp.Run] != nil {
		s.mu.Unlock()
		return true
	}
	if !w.roomLocked() {
		s.mu.Unlock()
		return false // its stability is kept: the next scan with room takes it
	}
	s.orphans[cp.Run] = sl
	s.mu.Unlock()
	delete(w.seen, cp.Run)
	go func() {
		err := s.runOrphan(cp.Run, cp.State, sl)
		w.mu.Lock()
		defer w.mu.Unlock()
		if err == nil {
			delete(w.refused, cp.Run) // resumed, or another process took it
			return
		}
		if w.refused[cp.Run]++; w.refused[cp.Run] == maxRefusals {
			s.log.Warn().Err(err).Str("run", cp.Run).Msg("an orphaned run failed to resume; it is left to a supervisor")
		}
	}()
	return true
}

// runOrphan resumes an orphaned run to its end (or its next park); its
// events go to the agent's sink only. A Conflict at the start means
// another process took the run first: this worker stands aside. It returns
// the failure of a resume that failed at once for another reason (nil
// otherwise).
func (s *Server) runOrphan(run string, from agent.RunState, sl *slot) (refused error) {
	defer func() {
		s.mu.Lock()
		delete(s.orphans, run)
		s.closeIdleLocked()
		s.mu.Unlock()
	}()
	ctx, cancel := context.WithCancelCause(s.base)
	defer cancel(nil)
	ctx = agent.WithOwner(ctx, sl.take)
	log := s.log.With().Str("run", run).Str("from", string(from)).Logger()
	var last error
	first := true
	func() {
		defer func() {
			if v := recover(); v != nil {
				last = &failure.Error{Kind: failure.Panic, Source: failure.SourceBus, Name: s.key, Op: "resume orphan",
					Err: &failure.PanicError{Value: v}, Message: "the runner crashed resuming an orphaned run"}
				failure.Or(s.policy).Handle(context.WithoutCancel(ctx), last)
				if first {
					refused = last // counted: a run whose resume crashes is not taken forever
				}
			}
		}()
		for ev, err := range s.resume.ResumeStream(ctx, run) {
			if first && err != nil {
				// A Conflict: another process took the run first, this
				// worker stands aside (not counted). A run that keeps
				// failing otherwise is left after maxRefusals.
				log.Debug().Err(err).Msg("the orphan was not resumed here; standing aside")
				if !errors.Is(err, failure.Conflict) {
					refused = err
				}
				return
			}
			if first {
				first = false
				s.resumed.Add(1)
				log.Info().Msg("resuming an orphaned run")
			}
			if err != nil && ev.Type == agent.EventRunFailed {
				last = err
			}
		}
	}()
	switch {
	case first:
	case last != nil && errors.Is(last, failure.Parked):
		log.Info().Msg("the orphaned run parked again")
	case last != nil:
		log.Info().Err(last).Msg("the orphaned run ended with a failure")
	default:
		log.Info().Msg("the orphaned run finished")
	}
	return refused
}
