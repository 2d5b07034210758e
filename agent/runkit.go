package agent

import "context"

// The runner kit: what a [Runner] written outside this package needs to
// behave as an [Agent], the workflows of package agent/workflow and the
// worker pools of package bus/worker do. A runner names each run with
// [NewRunID], reads where its run is nested with [ParentFrom] (and sets
// [Event.Parent] from it), and starts the runs of its steps under
// [WithParent], so that their events say where they belong. [WithElicitor]
// routes the questions of the runs under a context to another [Elicitor],
// and [BindCall] gives a tool called outside any run (by a server of its
// own) the [Call] a run would give it.

// NewRunID returns a fresh run id ("run_" and 16 random characters), the
// kind of id an [Agent] gives its runs: a [Runner] of its own uses it for
// [Event.Run] and [Answer.Run].
func NewRunID() string { return randomID("run_") }

// WithParent returns a context under which a run started by a [Runner] is
// nested in p: its events carry p as [Event.Parent]. A runner that runs
// other runners as its steps (as the workflows of package agent/workflow
// do) starts each under WithParent(ctx, Parent{Run: its run, Step: the
// step}). The tool call ctx belongs to, if any, stays visible through
// [CallFromContext]: a step of a runner that runs as a tool still reports
// progress and asks its questions through that call.
func WithParent(ctx context.Context, p Parent) context.Context {
	p.call, _ = CallFromContext(ctx)
	return context.WithValue(ctx, nestKey{}, &p)
}

// ParentFrom returns where a run started under ctx is nested: in the tool
// call of [CallFromContext], or in the step of [WithParent], whichever is
// innermost. ok is false for a run at the top. A [Runner] sets the Parent of
// its events from it.
func ParentFrom(ctx context.Context) (p Parent, ok bool) {
	pp, ok := parentFromContext(ctx)
	if !ok {
		return Parent{}, false
	}
	return *pp, true
}

// parentFromContext is [ParentFrom] as the pointer a run keeps.
func parentFromContext(ctx context.Context) (*Parent, bool) {
	switch v := ctx.Value(nestKey{}).(type) {
	case *Call:
		return &Parent{Run: v.Run, Call: v.ID}, true
	case *Parent:
		p := *v
		return &p, true
	}
	return nil, false
}

// elicitorKey is the context key of [WithElicitor].
type elicitorKey struct{}

// WithElicitor returns a context whose runs, nested runs included, ask e
// instead of their agent's own [Config.Elicitor]. The a2a server uses it so
// that the questions of a run it serves become its task's input-required
// turns; a nil e restores the agent's own.
func WithElicitor(ctx context.Context, e Elicitor) context.Context {
	return context.WithValue(ctx, elicitorKey{}, e)
}

// elicitor is who the run asks: the elicitor its context carries
// (WithElicitor), else the agent's Config.Elicitor.
func (r *run) elicitor() Elicitor {
	if e, _ := r.ctx.Value(elicitorKey{}).(Elicitor); e != nil {
		return e
	}
	return r.a.cfg.Elicitor
}

// CallBinding describes one tool call made outside a run, for [BindCall]:
// who asked, and where the call's reports go.
type CallBinding struct {
	// Run and ID name the call ([Call.Run], [Call.ID], and so
	// [Elicitation.Run] and [Elicitation.Call] of its questions).
	Run, ID string
	// Tool is the tool's name, and Source its provenance.
	Tool   string
	Source Provenance
	// IdempotencyKey is what [Call.IdempotencyKey] returns: empty unless
	// the caller names a key that stays the same when the call is sent
	// again.
	IdempotencyKey string
	// Progress receives each report of [Call.ReportProgress] (nil drops
	// them). It runs on the tool's goroutine and must not block for long.
	Progress func(Progress)
	// Forward receives each event of a run the tool started
	// ([Call.Forward], as [AsTool] does) and reports whether it was taken
	// (nil drops them).
	Forward func(Event) bool
	// Elicitor answers the tool's questions ([Call.Elicit]); nil declines
	// them.
	Elicitor Elicitor
}

// BindCall returns ctx carrying c as the [Call] of a tool call made outside
// a run, so that [CallFromContext] works for the tool as it does in a run,
// and the function to call once the tool returned: reports made after it
// are dropped. A server that calls a [Tool] for clients of its own (as
// package mcp/server does) binds each call before calling the tool.
func BindCall(ctx context.Context, c CallBinding) (context.Context, func()) {
	cs := &callState{ext: &c, closing: make(chan struct{})}
	call := &Call{Run: c.Run, ID: c.ID, Tool: c.Tool, Source: c.Source, state: cs, elicitor: c.Elicitor,
		grants: &grants{}, idem: c.IdempotencyKey}
	return context.WithValue(ctx, nestKey{}, call), cs.done
}

// sendExternal delivers a report of a bound call to its binding (called by
// send, under cs.mu, while the call has not returned).
func (cs *callState) sendExternal(m callMsg) bool {
	switch {
	case m.progress != nil && cs.ext.Progress != nil:
		cs.ext.Progress(*m.progress)
		return true
	case m.nested != nil && cs.ext.Forward != nil:
		return cs.ext.Forward(*m.nested)
	}
	return false
}
