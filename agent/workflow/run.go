package workflow

import (
	"context"
	"errors"
	"iter"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/telemetry"
)

// Common configures what every workflow shares. The zero value means
// defaults.
type Common struct {
	// Name identifies the workflow in events, tool names and agent cards
	// (required).
	Name string
	// Description says what the workflow does.
	Description string
	// Events receives the workflow's events and, as EventNested, those of
	// its steps (optional). Steps that are agents also send their own events
	// to their own sinks.
	Events agent.EventSink
	// Policy retries failed steps (transient failures, under a circuit
	// breaker keyed by workflow and step) and handles every failure (nil:
	// failure.Default, asked at each use). The steps' agents and workflows
	// follow their own Config's Policy, by the same rule.
	Policy failure.Policy
	// Logger receives structured logs (nil: none); the workflow puts it in
	// its runs' context, where a policy without a Logger logs.
	Logger *zerolog.Logger
}

// base is the part of every workflow built from Common.
type base struct {
	name, desc string
	events     agent.EventSink
	policy     failure.Policy
	log        zerolog.Logger
	logs       bool              // Common.Logger was given
	telCfg     agent.Telemetry   // the first step's providers (telemetry.go)
	tel        *telemetry.Source // telCfg resolved
}

func newBase(c Common, runners ...agent.Runner) (base, error) {
	if c.Name == "" {
		return base{}, failure.New(failure.Config, failure.SourceAgent, "a workflow needs a name")
	}
	b := base{name: c.Name, desc: c.Description, events: c.Events, policy: c.Policy, log: zerolog.Nop()}
	if c.Logger != nil {
		b.log, b.logs = *c.Logger, true
	}
	b.telCfg = inheritedTelemetry(runners)
	b.tel = telemetry.NewSource(b.telCfg.TracerProvider, b.telCfg.MeterProvider, b.telCfg.RecordContent)
	return b, nil
}

// pol is the workflow's failure policy: Common.Policy, else the process
// default.
func (b *base) pol() failure.Policy { return failure.Or(b.policy) }

// Name is the workflow's name.
func (b *base) Name() string { return b.name }

// Description is the workflow's description.
func (b *base) Description() string { return b.desc }

// errStopped is the cancellation cause when the consumer stops iterating.
var errStopped = errors.New("workflow: the caller stopped reading the run's events")

// wrun is one run of a workflow. Its methods run on the goroutine that
// iterates the stream, except where noted.
type wrun struct {
	b       *base
	id      string
	ctx     context.Context
	cancel  context.CancelCauseFunc
	parent  *agent.Parent
	yield   func(agent.Event, error) bool
	stopped bool
	seq     int
	start   time.Time
	ans     agent.Answer
	op      *telemetry.Op // the invoke_workflow span (nil: off)
	// in is the Input of the context the workflow was started with; its
	// steps do not see it, but what passOn gives them.
	in agent.Input
}

// stream runs body as a workflow run: it opens and closes the run's events
// and turns body's error into the run's end.
func (b *base) stream(ctx context.Context, input string, body func(w *wrun, input string) (string, error)) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		rctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		if b.logs {
			rctx = b.log.WithContext(rctx) // a policy without a Logger logs here
		}
		in, _ := agent.InputFrom(ctx)
		rctx = agent.WithInput(rctx, agent.Input{})
		w := &wrun{b: b, id: agent.NewRunID(), ctx: rctx, cancel: cancel, yield: yield, start: time.Now(), in: in}
		if p, ok := agent.ParentFrom(ctx); ok {
			w.parent = &p
		}
		w.traceStart()
		w.ans.Run = w.id
		w.emit(agent.Event{Type: agent.EventRunStarted, Text: input})
		out, err := body(w, input)
		w.traceEnd(err)
		w.ans.Elapsed = time.Since(w.start)
		if err != nil {
			if rctx.Err() != nil && !errors.Is(err, failure.Canceled) && failure.KindOf(err) != failure.Timeout {
				err = w.endErr()
			}
			fe := failure.From(err)
			ev := w.publish(agent.Event{Type: agent.EventRunFailed,
				Failure: agent.NewFailureInfo(failure.Outcome{Err: fe, Abort: true})})
			if !w.stopped {
				yield(ev, err)
			}
			return
		}
		w.ans.Text = out
		ans := w.ans
		w.emit(agent.Event{Type: agent.EventFinal, Text: out, Answer: &ans})
	}
}

// endErr is the failure of a run whose context is done.
func (w *wrun) endErr() error {
	cause := context.Cause(w.ctx)
	var fe *failure.Error
	if errors.As(cause, &fe) {
		return fe
	}
	return &failure.Error{Kind: failure.Canceled, Source: failure.SourceAgent, Name: w.b.name, Err: cause,
		Message: "the workflow was cancelled"}
}

// publish stamps an event and sends it to the sink.
func (w *wrun) publish(ev agent.Event) agent.Event {
	w.seq++
	ev.Run, ev.Seq, ev.Time, ev.Agent, ev.Parent = w.id, w.seq, time.Now(), w.b.name, w.parent
	if w.b.events != nil {
		w.b.events.Emit(context.WithoutCancel(w.ctx), ev)
	}
	return ev
}

// emit publishes an event and yields it; a consumer that stops iterating
// cancels the run.
func (w *wrun) emit(ev agent.Event) {
	ev = w.publish(ev)
	if w.stopped {
		return
	}
	if !w.yield(ev, nil) {
		w.stopped = true
		w.cancel(errStopped)
	}
}

// handle passes a failure through the policy and emits it.
func (w *wrun) handle(err error, step *agent.StepInfo) failure.Outcome {
	o := w.b.pol().Handle(w.ctx, err)
	w.ans.Failures++
	w.emit(agent.Event{Type: agent.EventFailure, Step: step, Failure: agent.NewFailureInfo(o)})
	return o
}

// account adds a step's answer to the workflow's totals.
func (w *wrun) account(a *agent.Answer) {
	w.ans.Usage = w.ans.Usage.Add(a.Usage)
	w.ans.Cost = w.ans.Cost.Add(a.Cost)
	w.ans.Turns += a.Turns
	w.ans.ToolCalls += a.ToolCalls
	w.ans.Failures += a.Failures
}
