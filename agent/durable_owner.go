package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchboard-dev/switchboard/failure"
)

// ErrHandover, as (or wrapped in) the cancellation cause of a durable run's
// context, means the run is handed over, not ended: it stops writing at
// once and its checkpoint stays as it was, so that another process resumes
// it. A worker that stops, or a pool that lost contact with its caller,
// cancels its runs with it (context.WithCancelCause); [Agent.Resume]
// continues them elsewhere.
var ErrHandover = errors.New("agent: the run is handed over to another process")

// ownerKey is the context key of WithOwner.
type ownerKey struct{}

// WithOwner returns a context whose durable runs ask owner what to write as
// [Checkpoint.Owner] when they start or resume: the run's id in, the owner's
// name and the checkpoint revision a resume must find out (0: any revision;
// another one fails the resume with [failure.Conflict], as another process
// moved the run on). An empty name leaves the run its own random one. A
// process that serves durable runs for others (as a bus/worker worker does)
// names the runs after itself, so that its peers can tell whether a run's
// owner is alive and resume the runs of one that is not. Runs nested in the
// calls of a run see the same owner function: it decides which runs it names.
func WithOwner(ctx context.Context, owner func(run string) (name string, expect uint64)) context.Context {
	return context.WithValue(ctx, ownerKey{}, owner)
}

// Durability returns what keeps the agent's runs ([Config].Durable; a zero
// [Durability.Runs] for an agent whose runs are not durable): a worker that
// resumes runs reads their checkpoints there.
func (a *Agent) Durability() Durability { return a.cfg.Durable }

// takeOwner names this attempt of the run in its checkpoints: the name the
// context's owner function (WithOwner) gives it, else a random one. expect
// is the revision a resume must find the checkpoint at (0: any).
func (r *run) takeOwner() (owner string, expect uint64) {
	if f, _ := r.ctx.Value(ownerKey{}).(func(string) (string, uint64)); f != nil {
		if owner, expect = f(r.id); owner != "" {
			return owner, expect
		}
	}
	return randomID("own_"), 0
}

// movedOn is the Conflict of a resume that expected the checkpoint at
// revision expect (an orphan judged there) and found it moved on.
func movedOn(cp *Checkpoint, expect uint64) error {
	return &failure.Error{Kind: failure.Conflict, Source: failure.SourceAgent, Op: "resume",
		Message: fmt.Sprintf("run %q moved on (checkpoint revision %d, expected %d): another process runs it", cp.Run, cp.Revision, expect)}
}

// watchHandover makes the durable run halt once its context is cancelled
// with a handover cause (a worker stopping, or a pool that lost contact,
// gives the run back): from then on it writes nothing, and its checkpoint
// stays resumable instead of recording a failure. durableRun.halted checks
// it, before every write.
func (r *run) watchHandover() {
	r.d.mu.Lock()
	r.d.runCtx = r.ctx
	r.d.mu.Unlock()
}

// handoverLocked is the halt of a run whose context was cancelled with a
// handover cause (nil otherwise); d.mu is held.
func (d *durableRun) handoverLocked() error {
	if d.runCtx == nil {
		return nil
	}
	cause := context.Cause(d.runCtx)
	if cause == nil || !errors.Is(cause, ErrHandover) {
		return nil
	}
	return &failure.Error{Kind: failure.Unavailable, Source: failure.SourceAgent, Op: "handover", Err: cause,
		Message: fmt.Sprintf("run %q was handed over; it stops and stays resumable", d.cp.Run)}
}
