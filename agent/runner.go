package agent

import (
	"context"
	"iter"

	"github.com/switchboard-dev/switchboard/failure"
)

// Runner answers an input with a run of events. *Agent is a Runner, and so
// are the workflows of package agent/workflow and the remote worker pools of
// package bus/worker: anything that is a Runner can be a workflow step,
// offered to another agent as a tool (AsTool), or served over A2A.
//
// Stream follows the contract of Session.Stream: the last pair it yields is
// either an EventFinal (whose Answer is set) with a nil error, or an
// EventRunFailed with the run's error, and stopping the iteration early
// cancels the run. A run started with a context that carries a tool call
// (CallFromContext) or a workflow step sets Parent on its events.
type Runner interface {
	// Name identifies the runner in events, tool names and agent cards.
	Name() string
	// Description says what the runner does (tool descriptions, cards).
	Description() string
	// Stream runs input in a new conversation, yielding its events.
	Stream(ctx context.Context, input string) iter.Seq2[Event, error]
}

// Run runs input on r and returns its answer, discarding the events (they
// still reach r's EventSink, if it has one).
func Run(ctx context.Context, r Runner, input string) (*Answer, error) {
	if a, ok := r.(*Agent); ok {
		return a.Run(ctx, input)
	}
	return collect(r.Stream(ctx, input))
}

// collect drains a run's events and returns its answer: the Answer of its
// EventFinal, or the error it ended with. A stream that ends without either
// is reported as a failure of kind Internal.
func collect(seq iter.Seq2[Event, error]) (*Answer, error) {
	for ev, err := range seq {
		if err != nil {
			return nil, err
		}
		if ev.Type == EventFinal {
			if ev.Answer != nil {
				return ev.Answer, nil
			}
			return &Answer{Run: ev.Run, Text: ev.Text, Handoff: ev.Handoff}, nil
		}
	}
	return nil, &failure.Error{Kind: failure.Internal, Source: failure.SourceAgent,
		Message: "the run's event stream ended without a final answer or an error"}
}

// nestKey is the context key of the innermost place a run may be nested in:
// a *Call (a tool call) or a *Parent (a workflow step). One key, so that the
// innermost wins and one lookup finds it.
type nestKey struct{}

// nest wraps an event of a nested run for the stream of the run that
// started it: it returns EventNested carrying ev, or ev's own Nested event
// when ev is already a forwarded one (so nesting stays one level deep and
// Parent places the event).
func nest(ev Event) Event {
	if ev.Type == EventNested && ev.Nested != nil {
		return Event{Type: EventNested, Nested: ev.Nested}
	}
	cp := ev
	return Event{Type: EventNested, Nested: &cp}
}
