package worker

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
)

// ErrRemote is the cause of the failure a remote run ended with
// (errors.Is(err, worker.ErrRemote)); the failure keeps the remote Kind,
// Source, Name and Tool.
var ErrRemote = errors.New("worker: the remote run failed")

// ErrNoWorker is the cause of the Unavailable failure of a pool that no
// worker serves. It does not count against the pool's circuit: the next
// run goes to a worker that started serving in the meantime.
var ErrNoWorker = errors.New("worker: no worker serves the pool")

// ErrWorkerLost is the cause of the Transient failure of a worker that
// stopped answering, or gave a run back because it is stopping; the pool
// retries the run on another worker.
var ErrWorkerLost = errors.New("worker: the worker was lost")

// remoteError rebuilds the failure a remote run ended with from its
// EventRunFailed, marked retried: the remote run already handled it under
// its own policy.
func remoteError(ev agent.Event, worker string) *failure.Error {
	fi := ev.Failure
	if fi == nil {
		return &failure.Error{Kind: failure.Protocol, Source: failure.SourceBus, Op: "remote run",
			Err:     fmt.Errorf("%w on worker %s (run %s)", ErrRemote, worker, ev.Run),
			Message: "the remote run failed without saying why"}
	}
	src := fi.Source
	if src == "" {
		src = failure.SourceBus
	}
	// The remote run's policy has already retried what it could: running
	// the whole input again would repeat its side effects.
	return (&failure.Error{Kind: fi.Kind, Source: src, Name: fi.Name, Tool: fi.Tool, Op: "remote run",
		Message: fi.Message, Err: fmt.Errorf("%w on worker %s (run %s)", ErrRemote, worker, ev.Run)}).MarkRetried()
}

// failedEvent is the EventRunFailed of a run that ended with err.
func failedEvent(err error) agent.Event {
	return agent.Event{Type: agent.EventRunFailed,
		Failure: agent.NewFailureInfo(failure.Outcome{Err: failure.From(err), Abort: true})}
}

// ctxFailure is the failure of a context that is done: its cause when that
// is a typed failure (an agent's tool-call timeout), else Canceled or
// Timeout from the bus, for the pool or worker name.
func ctxFailure(ctx context.Context, name, op string) *failure.Error {
	cause := context.Cause(ctx)
	var fe *failure.Error
	if errors.As(cause, &fe) {
		return fe
	}
	e := &failure.Error{Kind: failure.Canceled, Source: failure.SourceBus, Name: name, Op: op, Err: cause,
		Message: "the run was cancelled by its caller"}
	if errors.Is(cause, context.DeadlineExceeded) {
		e.Kind, e.Message = failure.Timeout, "the caller's deadline passed"
	}
	return e
}

// sameFailure reports whether two failures are the same handled one (a
// policy may return a copy).
func sameFailure(a, b *failure.Error) bool {
	return a != nil && b != nil && a.Kind == b.Kind && a.Message == b.Message && a.Name == b.Name && a.Op == b.Op
}
