package worker

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus/internal/wire"
	"github.com/switchboard-dev/switchboard/failure"
)

// resumer is a Runner whose runs are durable (an *agent.Agent with
// Config.Durable.Runs): a run started on a worker that died is resumed
// from its latest checkpoint on another.
type resumer interface {
	ResumeStream(ctx context.Context, run string) iter.Seq2[agent.Event, error]
}

// durableRunner is r as a resumer if its runs are durable: an agent's are
// when it has a run store.
func durableRunner(r agent.Runner) resumer {
	res, ok := r.(resumer)
	if !ok {
		return nil
	}
	if a, ok := r.(*agent.Agent); ok && a.Durability().Runs == nil {
		return nil
	}
	return res
}

// storeOf is the durability of a durable *agent.Agent (one with a run
// store; nil for any other runner).
func storeOf(r agent.Runner) *agent.Durability {
	a, ok := r.(*agent.Agent)
	if !ok {
		return nil
	}
	d := a.Durability()
	if d.Runs == nil {
		return nil
	}
	return &d
}

// runEvents is the job's run: the input run anew, or, on a retry after a
// lost worker, the remote run resumed from its checkpoint when the runner
// can (a run that had no checkpoint yet had run no tool: it starts anew).
func (s *Server) runEvents(j *job) iter.Seq2[agent.Event, error] {
	r := s.resume
	if j.resume == "" || r == nil {
		return s.r.Stream(j.inputCtx(), j.input)
	}
	return func(yield func(agent.Event, error) bool) {
		for try := 1; ; try++ {
			if err := s.awaitResumable(j); err != nil {
				yield(agent.Event{}, err)
				return
			}
			first, again := true, false
			for ev, err := range r.ResumeStream(j.ctx, j.resume) {
				if first && err != nil && ev.Type == "" && errors.Is(err, failure.NotFound) {
					s.log.Debug().Str("job", j.id).Str("run", j.resume).Msg("no checkpoint to resume: the input runs anew")
					for ev, err := range s.r.Stream(j.inputCtx(), j.input) {
						if !yield(ev, err) {
							return
						}
					}
					return
				}
				if first && err != nil && errors.Is(err, failure.Conflict) && s.live != nil && try < maxResumeTries {
					// Another process took the run first (an orphan
					// sweeper): follow it, and take it only if it is
					// orphaned again.
					again = true
					break
				}
				first = false
				if !yield(ev, err) {
					return
				}
			}
			if !again {
				return
			}
			j.slot.release()
			s.log.Debug().Str("job", j.id).Str("run", j.resume).Msg("the run to resume was taken by another process; following it")
		}
	}
}

// maxResumeTries bounds a job's attempts at resuming a run that other
// processes keep taking first.
const maxResumeTries = 8

// awaitResumable waits, for a job that resumes a durable run, until this
// worker may take the run: at once when it is not running, when its owner
// is the worker the pool lost it on, or when it is not a worker's run;
// else (a live worker runs it: an orphan sweeper took it) once it is an
// orphan again (no heartbeat lists it and its checkpoint has not changed
// for OrphanAfter), or it stops running. The resume is then conditional on
// the revision seen. The wait ends with the job's ctx (the caller's
// deadline or its cancellation), or once the caller has been silent for
// followSilence times its limit.
func (s *Server) awaitResumable(j *job) error {
	st := s.store
	if s.live == nil || st == nil {
		return nil
	}
	var seen stability
	tick := time.NewTicker(s.live.interval)
	defer tick.Stop()
	for {
		lctx, cancel := context.WithTimeout(j.ctx, storeOpTimeout)
		cp, err := st.Runs.LoadCheckpoint(lctx, j.resume)
		cancel()
		if errors.Is(err, failure.NotFound) {
			return nil
		}
		if err == nil {
			now := time.Now()
			_, owner, tagged := ownerOf(cp.Owner)
			if cp.State != agent.RunRunning || !tagged || (j.lost != "" && owner == wire.Token(j.lost)) ||
				(seen.stableFor(cp.Revision, now, s.live.after) && s.live.orphaned(cp.Run, now)) {
				j.slot.expect(cp.Run, cp.Revision)
				return nil
			}
		}
		if silent := time.Since(time.Unix(0, j.lastPing.Load())); silent > followSilence*j.interval*time.Duration(j.missed) {
			// Nobody waits for the end: the run goes on where it is.
			return &failure.Error{Kind: failure.Canceled, Source: failure.SourceBus, Name: s.key, Op: "resume",
				Message: fmt.Sprintf("the caller stopped answering (silent for %s) while its run ran on another worker", silent.Round(time.Millisecond))}
		}
		select {
		case <-j.ctx.Done():
			return ctxFailure(j.ctx, s.key, "resume")
		case <-tick.C:
		}
	}
}

// followSilence: a job following a run another worker took gives up once
// its caller has been silent for this many times its limit (a slow caller
// is back well within it; the run goes on where it is).
const followSilence = 10

// attemptOrWait is an attempt; a run to resume (its worker was lost) that
// finds no worker at all waits for one to serve the pool again, for up to
// CapacityWait: its checkpoint keeps it, and a new worker process resumes
// it.
func (st *stream) attemptOrWait(ctx context.Context) (*terminal, error) {
	deadline := time.Now().Add(st.p.cfg.CapacityWait)
	for {
		t, err := st.attempt(ctx)
		if !errors.Is(err, ErrNoWorker) || st.remoteRun == "" || time.Now().After(deadline) {
			return t, err
		}
		timer := time.NewTimer(st.p.cfg.Heartbeat)
		select {
		case <-ctx.Done():
			timer.Stop()
			return t, err
		case <-timer.C:
		}
	}
}

// noteRun remembers the id of the remote run an attempt follows, from its
// first event, so that a retry resumes it.
func (st *stream) noteRun(ev agent.Event) {
	if ev.Run != "" && ev.Type != agent.EventNested {
		st.remoteRun = ev.Run
	}
}
