package worker

import (
	"context"
	"errors"
	"iter"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/failure"
)

// resumer is a Runner whose runs are durable (an *agent.Agent with
// Config.Durable.Store): a run started on a worker that died is resumed
// from its latest checkpoint on another.
type resumer interface {
	ResumeStream(ctx context.Context, run string) iter.Seq2[agent.Event, error]
}

// durableRunner is r as a resumer if its runs are durable: an agent's are
// when it has a store (its sessions then have ids).
func durableRunner(r agent.Runner) resumer {
	res, ok := r.(resumer)
	if !ok {
		return nil
	}
	if a, ok := r.(*agent.Agent); ok && a.NewSession().ID() == "" {
		return nil
	}
	return res
}

// runEvents is the job's run: the input run anew, or, on a retry after a
// lost worker, the remote run resumed from its checkpoint when the runner
// can (a run that had no checkpoint yet had run no tool: it starts anew).
func (s *Server) runEvents(j *job) iter.Seq2[agent.Event, error] {
	r := s.resume
	if j.resume == "" || r == nil {
		return s.r.Stream(j.ctx, j.input)
	}
	return func(yield func(agent.Event, error) bool) {
		first := true
		for ev, err := range r.ResumeStream(j.ctx, j.resume) {
			if first && err != nil && ev.Type == "" && errors.Is(err, failure.NotFound) {
				s.log.Debug().Str("job", j.id).Str("run", j.resume).Msg("no checkpoint to resume: the input runs anew")
				for ev, err := range s.r.Stream(j.ctx, j.input) {
					if !yield(ev, err) {
						return
					}
				}
				return
			}
			first = false
			if !yield(ev, err) {
				return
			}
		}
	}
}

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
