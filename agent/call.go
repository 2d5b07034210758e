package agent

import (
	"context"
	"encoding/json"
	"errors"
	"path"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/switchboard-dev/switchboard/failure"
)

// Call is the context of one tool call, available to the tool through
// CallFromContext. It lets a tool report progress, ask a person, and (for
// trusted toolset code, never for tool output) pre-approve tools for the rest
// of the run.
type Call struct {
	// Run is the run's id.
	Run string
	// ID is the tool call's id.
	ID string
	// Tool is the tool's name as the model called it.
	Tool string
	// Source is the tool's provenance.
	Source Provenance

	state    *callState
	elicitor Elicitor
	grants   *grants
	// agent and toolset are the run's agent and the toolset of the tool
	// (outside a run: nil and "").
	agent   *Agent
	toolset string
	idem    string
	// handle is the handle a resumed call was recorded with (SaveHandle).
	handle json.RawMessage
	// parts is the run's rule for media parts (nil outside a run).
	parts *partRule
}

// CallFromContext returns the tool call ctx belongs to, if any: the
// innermost one, also from inside the steps of a workflow that runs as that
// call's tool.
func CallFromContext(ctx context.Context) (*Call, bool) {
	switch v := ctx.Value(nestKey{}).(type) {
	case *Call:
		return v, true
	case *Parent:
		return v.call, v.call != nil
	}
	return nil, false
}

// Forward passes an event of a run this call started (an agent run inside
// the tool, a remote worker's run) into the calling run, where it is yielded
// as an [EventNested]. Start the nested run with the call's context so its
// events carry [Event.Parent]. Forward blocks while the calling run's
// consumer is busy and reports false, dropping the event, once the call has
// returned. [AsTool] forwards for you.
func (c *Call) Forward(ev Event) bool {
	if c == nil || c.state == nil {
		return false
	}
	return c.state.forward(ev)
}

// ReportProgress publishes a progress report for the call: it becomes an
// EventToolProgress in the run (and on the bus). Reports are dropped rather
// than blocking the tool when the run's consumer is slow.
func (c *Call) ReportProgress(p Progress) {
	if c != nil && c.state != nil {
		c.state.progress(p)
	}
}

// Elicit asks a person through the agent's Elicitor, tagging the question
// with this run and call. Without an Elicitor the answer is a decline.
func (c *Call) Elicit(ctx context.Context, e Elicitation) (ElicitationResult, error) {
	if c != nil && c.state != nil && c.state.r.parksElicitation(c) {
		return c.state.r.elicitOrPark(ctx, c, e)
	}
	if c == nil || c.elicitor == nil {
		return ElicitationResult{Action: ElicitDecline, Reason: "no one is available to answer questions"}, nil
	}
	e.Run, e.Call = c.Run, c.ID
	if e.Source.Kind == "" {
		e.Source = c.Source
	}
	return c.elicitor.Elicit(ctx, e)
}

// IdempotencyKey is the key that names this call across its attempts: a
// call sent again (a retry, or a durable run resumed in another process)
// has the same key, so a tool whose effects leave the process can pass it
// on and let the far side do the work once. Package mcp sends it in the
// tools/call request's _meta, package a2a as the message id. In a run it
// is the run's id and the call's ([Call.Run], [Call.ID]); a call bound with
// [BindCall] has the key of its [CallBinding] ("" when it has none).
func (c *Call) IdempotencyKey() string {
	if c == nil {
		return ""
	}
	return c.idem
}

// Handle is the handle this call recorded through [Call.SaveHandle]
// before its run's process died: a resumed call continues the work it names
// (polls the MCP task) instead of starting it again. It is nil for a call
// that recorded none.
func (c *Call) Handle() json.RawMessage {
	if c == nil {
		return nil
	}
	return c.handle
}

// SaveHandle records handle, which names the call's work at its far side
// while it goes on (an MCP task's id), with the call's intent in the
// run's RunStore ([CallRecord.Handle]): should the process die before the
// call's result is recorded, the resumed run calls the tool again with
// [Call.Handle] set rather than holding the call in doubt. A call without
// an intent (a read-only tool's) gets one with the handle. Outside a
// durable run it records nothing and returns nil.
func (c *Call) SaveHandle(ctx context.Context, handle json.RawMessage) error {
	if c == nil || c.state == nil || c.state.r == nil || c.state.r.d == nil {
		return nil
	}
	d := c.state.r.d
	d.mu.Lock()
	intended := d.intended[c.ID]
	d.mu.Unlock()
	if err := d.halted(); err != nil {
		return err
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	if !intended {
		// A read-only call has no intent: its far-side work is worth one
		// now, so that a resumed run continues it.
		err := d.runs.PutIntent(sctx, &CallRecord{V: recordVersion, Run: c.Run, Call: c.ID, Tool: c.Tool, Handle: handle})
		if err != nil && !errors.Is(err, failure.Conflict) {
			return err
		}
		// Its result now goes with the intent (a resumed call's intent is
		// there already: its handle is replaced below).
		d.mu.Lock()
		d.intended[c.ID] = true
		d.mu.Unlock()
		if err == nil {
			return nil
		}
	}
	return d.runs.PutCallHandle(sctx, &CallRecord{Run: c.Run, Call: c.ID, Handle: handle})
}

// Grant pre-approves tools whose names match the patterns (path.Match
// syntax) for the rest of the run: an "ask" rule becomes "allow". It never
// overrides "deny". The skills toolset uses it for a skill's allowed-tools.
func (c *Call) Grant(patterns ...string) {
	if c != nil && c.grants != nil {
		c.grants.add(patterns...)
	}
}

// GuardTools puts the guards named guards over the calls and results of
// the tools whose names match the patterns (path.Match syntax), at
// GuardToolCall and GuardToolResult, for the rest of the session, after
// the agent's own Config.Guards. The names are the calling tool's
// toolset's: it resolves them with its optional Guard method (see
// Toolset) now and, when the run resumes from a checkpoint (which keeps
// them, Checkpoint.Guarded), again, in this process or another. A toolset
// without the method, or a name it does not know, is a Config failure. The
// skills toolset uses it for the guards a skill declares, over the tools
// its allowed-tools grant.
func (c *Call) GuardTools(patterns []string, guards ...string) error {
	if c == nil || c.grants == nil || len(patterns) == 0 || len(guards) == 0 {
		return nil
	}
	g := GuardedTools{Toolset: c.toolset, Patterns: slices.Clone(patterns), Guards: slices.Clone(guards)}
	gs, err := c.agent.guardsOf(g)
	if err != nil {
		return err
	}
	c.grants.mu.Lock()
	c.grants.guarded = append(c.grants.guarded, guardedTools{rec: g, set: gs})
	c.grants.guarding.Store(true)
	c.grants.mu.Unlock()
	return nil
}

// grants is the set of patterns pre-approved during a session, and the
// guards added to some tools (Call.GuardTools).
type grants struct {
	mu       sync.Mutex
	patterns []string
	guarded  []guardedTools
	// guarding is set once guarded has rules.
	guarding atomic.Bool
}

// guardedTools are rules over the tools matching rec.Patterns.
type guardedTools struct {
	rec GuardedTools
	set *guardSet
}

// appendGuards appends the session's rule sets that apply to tool.
func (g *grants) appendGuards(sets []*guardSet, tool string) []*guardSet {
	if !g.guarding.Load() {
		return sets
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, gt := range g.guarded {
		for _, p := range gt.rec.Patterns {
			if ok, _ := path.Match(p, tool); ok {
				sets = append(sets, gt.set)
				break
			}
		}
	}
	return sets
}

func (g *grants) add(p ...string) {
	g.mu.Lock()
	g.patterns = append(g.patterns, p...)
	g.mu.Unlock()
}

func (g *grants) snapshot() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.patterns...)
}
