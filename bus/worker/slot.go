package worker

import (
	"crypto/rand"
	"strings"
	"sync"
)

// ownerPrefix starts the owner of a run a worker's slot named.
const ownerPrefix = "worker:"

// slot is the place of one run in a worker: the first durable run that
// takes it (the job's own run; runs nested in its tool calls find it
// taken) is named after the worker, so that other workers can tell whether
// the run is alive (the worker lists it in its heartbeats) and resume it
// when it is not. A job's context carries slot.take through
// agent.WithOwner.
type slot struct {
	pool, worker string

	mu  sync.Mutex
	run string
	// expectRun and expectRev: a resume of expectRun must find its
	// checkpoint at expectRev (the revision an orphan was judged at).
	expectRun string
	expectRev uint64
}

// newSlot returns an empty slot of the worker serving pool. Both are
// subject tokens (no ':').
func newSlot(pool, worker string) *slot { return &slot{pool: pool, worker: worker} }

// expect makes a resume of run through this slot conditional on the run's
// checkpoint being at revision rev.
func (s *slot) expect(run string, rev uint64) {
	s.mu.Lock()
	s.expectRun, s.expectRev = run, rev
	s.mu.Unlock()
}

// taken is the run that took the slot ("" before one did, or once
// released).
func (s *slot) taken() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.run
}

// release forgets the slot's run: the worker no longer lists it.
func (s *slot) release() {
	s.mu.Lock()
	s.run = ""
	s.mu.Unlock()
}

// take is the slot's owner function (agent.WithOwner): it binds the slot to
// run (if it is free or bound to run already) and returns the owner to
// write in the run's checkpoint, named after the worker with a random id of
// this attempt, and the revision a resume must find (0: any). For a run
// while the slot is another's, it names nothing ("").
func (s *slot) take(run string) (owner string, expect uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.run != "" && s.run != run {
		return "", 0
	}
	s.run = run
	if s.expectRun == run {
		expect = s.expectRev
	}
	return ownerPrefix + s.pool + ":" + s.worker + ":own_" + strings.ToLower(rand.Text()[:16]), expect
}

// ownerOf parses a checkpoint's owner: the pool and worker tokens of a run
// a worker's slot named (ok false for any other owner).
func ownerOf(owner string) (pool, worker string, ok bool) {
	rest, found := strings.CutPrefix(owner, ownerPrefix)
	if !found {
		return "", "", false
	}
	parts := strings.SplitN(rest, ":", 3)
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return "", "", false
	}
	return parts[0], parts[1], true
}
