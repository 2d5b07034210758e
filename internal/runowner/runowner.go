// Package runowner names the owner of a durable run served by a
// bus/worker worker, so that other workers can tell whether the run is
// alive (its worker lists it in its heartbeats) and resume it when it is
// not. bus/worker puts a Slot in a job's context; package agent, writing a
// run's checkpoint, takes the slot (Take) and writes the owner it returns.
// The functions agent provides to bus/worker are set at agent's init, as
// any, because agent imports this package.
package runowner

import (
	"context"
	"errors"
	"strings"
	"sync"
)

// ErrHandover, as (or wrapped in) the cancellation cause of a durable run,
// means the run is handed over, not ended: it stops writing at once and its
// checkpoint stays as it was, so that another process resumes it.
var ErrHandover = errors.New("runowner: the run is handed over to another process")

// prefix starts the owner of a run taken from a Slot.
const prefix = "worker:"

// Slot is the place of one run in a worker: the first durable run that
// takes it (the job's own run; runs nested in its tool calls find it
// taken) is named after the worker and listed in the worker's heartbeats.
type Slot struct {
	pool, worker string

	mu  sync.Mutex
	run string
	// expectRun and expectRev: a resume of expectRun must find its
	// checkpoint at expectRev (the revision an orphan was judged at).
	expectRun string
	expectRev uint64
}

// NewSlot returns an empty slot of the worker serving pool. Both are
// subject tokens (no ':').
func NewSlot(pool, worker string) *Slot { return &Slot{pool: pool, worker: worker} }

// Expect makes a resume of run through this slot conditional on the run's
// checkpoint being at revision rev.
func (s *Slot) Expect(run string, rev uint64) {
	s.mu.Lock()
	s.expectRun, s.expectRev = run, rev
	s.mu.Unlock()
}

// Run is the run that took the slot ("" before one did, or once released).
func (s *Slot) Run() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.run
}

// Release forgets the slot's run: the worker no longer lists it.
func (s *Slot) Release() {
	s.mu.Lock()
	s.run = ""
	s.mu.Unlock()
}

type slotKey struct{}

// With returns ctx carrying s.
func With(ctx context.Context, s *Slot) context.Context { return context.WithValue(ctx, slotKey{}, s) }

// Take binds ctx's slot to run (if it is free or bound to run already) and
// returns the owner to write in the run's checkpoint, with attempt (a
// random id of this attempt) in it, and the revision a resume must find (0:
// any). Without a slot, or with one taken by another run, the owner is
// attempt and nothing is listed.
func Take(ctx context.Context, run, attempt string) (owner string, expect uint64) {
	s, _ := ctx.Value(slotKey{}).(*Slot)
	if s == nil {
		return attempt, 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.run != "" && s.run != run {
		return attempt, 0
	}
	s.run = run
	if s.expectRun == run {
		expect = s.expectRev
	}
	return prefix + s.pool + ":" + s.worker + ":" + attempt, expect
}

// Parse returns the pool and worker named by an owner Take returned (ok
// false for any other owner).
func Parse(owner string) (pool, worker string, ok bool) {
	rest, found := strings.CutPrefix(owner, prefix)
	if !found {
		return "", "", false
	}
	parts := strings.SplitN(rest, ":", 3)
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// The states of a durable run's checkpoint (agent.Checkpoint.State): package
// agent writes them, bus/worker's sweeper reads them.
const (
	StateRunning = "running"
	StateParked  = "parked"
	StateDone    = "done"
	StateFailed  = "failed"
)

// StoreOf returns the agent.Store of a durable *agent.Agent (nil for any
// other runner). Package agent sets it when it is initialised.
var StoreOf func(runner any) any
