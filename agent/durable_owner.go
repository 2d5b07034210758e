package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/runowner"
)

func init() {
	runowner.StoreOf = func(runner any) any {
		if a, ok := runner.(*Agent); ok && a.cfg.Durable.Runs != nil {
			return a.cfg.Durable
		}
		return nil
	}
}

// takeOwner names this attempt of the run in its checkpoints: a run served
// by a bus/worker worker is named after it (internal/runowner), so that
// other workers know whom to ask whether it is alive. expect is the
// revision a resume must find the checkpoint at (0: any).
func (r *run) takeOwner() (owner string, expect uint64) {
	return runowner.Take(r.ctx, r.id, randomID("own_"))
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
	if cause == nil || !errors.Is(cause, runowner.ErrHandover) {
		return nil
	}
	return &failure.Error{Kind: failure.Unavailable, Source: failure.SourceAgent, Op: "handover", Err: cause,
		Message: fmt.Sprintf("run %q was handed over; it stops and stays resumable", d.cp.Run)}
}
