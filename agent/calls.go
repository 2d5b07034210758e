package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/schema"
	"github.com/switchboard-dev/switchboard/llm"
)

// callMsg is what a call's worker tells the run's goroutine.
type callMsg struct {
	i        int
	progress *Progress
	nested   *Event
	done     bool
	result   *Result
	outcome  *failure.Outcome
	elapsed  time.Duration
	// guards are the verdicts of the call's guards to report.
	guards []GuardInfo
}

// callJob is a call that passed the early checks and is to be run.
type callJob struct {
	i    int
	c    llm.ToolCall
	tool Tool
	spec ToolSpec
	info *CallInfo
	perm Permission
}

// batch is one turn's tool calls while they run: exactly one result per
// call, in call order, and the first failure that aborts the run.
type batch struct {
	r       *run
	turn    int
	calls   []llm.ToolCall
	results []llm.ToolResult
	infos   []*CallInfo
	journal callJournal
	abort   error
	// ctx is the batch's context (the run's for one call) and cancel
	// cancels it; msgs carries the calls' reports when several run.
	ctx    context.Context
	cancel context.CancelCauseFunc
	msgs   chan callMsg
}

// runCalls runs one turn's tool calls, at most MaxParallel at once, and
// returns exactly one result per call, in call order. If pre is non-nil no
// call runs: each gets a result saying why, and pre is returned.
func (r *run) runCalls(turn int, calls []llm.ToolCall, pre error) ([]llm.ToolResult, error) {
	b := &batch{r: r, turn: turn, calls: calls, results: make([]llm.ToolResult, len(calls)),
		infos: make([]*CallInfo, len(calls)), journal: r.journal()}
	var jobs []callJob
	for i, c := range calls {
		if j, ok := b.admit(i, c, pre); ok {
			jobs = append(jobs, j)
		}
	}

	// A turn with one call runs it on this (the run's) goroutine: no
	// hand-off, no batch to cancel. Several run on goroutines, at most
	// MaxParallel at once, cancelled together when one aborts the run.
	b.ctx, b.cancel = r.ctx, context.CancelCauseFunc(func(error) {})
	switch {
	case len(jobs) == 1:
		b.finish(b.do(jobs[0], true))
	case len(jobs) > 1:
		b.ctx, b.cancel = context.WithCancelCause(r.ctx)
		defer b.cancel(nil)
		b.msgs = make(chan callMsg, 2*len(calls)+16)
		sem := make(chan struct{}, r.a.cfg.MaxParallel)
		var wg sync.WaitGroup
		for _, j := range jobs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				select {
				case sem <- struct{}{}:
					defer func() { <-sem }()
				case <-b.ctx.Done():
					b.msgs <- callMsg{i: j.i, done: true, outcome: r.outcomeOf(b.ctx, j.c.Name, context.Cause(b.ctx))}
					return
				}
				b.msgs <- b.do(j, false)
			}()
		}
		go func() { wg.Wait(); close(b.msgs) }()
		for m := range b.msgs {
			if !m.done {
				r.emitCallMsg(turn, b.infos[m.i], m)
				continue
			}
			b.finish(m)
		}
	}
	return b.results, b.abort
}

// admit starts call i: a call the journal settles (a resumed run knows its
// outcome) or that fails the early checks (the run's budget, an unknown
// tool, its arguments) gets its result now; any other is returned as a job
// to run.
func (b *batch) admit(i int, c llm.ToolCall, pre error) (callJob, bool) {
	r := b.r
	tool := r.lookupTool(c.Name)
	info := &CallInfo{ID: c.ID, Tool: c.Name, Args: c.Args}
	var spec ToolSpec
	if tool != nil {
		spec = tool.Spec()
		info.Source = spec.Source
	}
	b.infos[i] = info
	r.emit(Event{Type: EventToolStarted, Turn: b.turn, Call: info})
	if b.journal.resume(b.turn, c, info, b.results, i) {
		return callJob{}, false
	}
	var perm Permission
	early := b.early(c, tool, pre)
	if early == nil {
		r.ans.ToolCalls++
		perm = r.a.perms.decide(spec, r.s.grants.snapshot(), r.a.classes.classify)
		if args, err := r.checkArgs(c.Args, spec, perm); err != nil {
			early = err
		} else {
			info.Args = args
		}
	}
	if early == nil {
		return callJob{i: i, c: c, tool: tool, spec: spec, info: info, perm: perm}, true
	}
	fe := failure.From(early)
	if fe.Tool == "" {
		fe.Tool = c.Name
	}
	o := r.handle(fe, info)
	r.traceRefused(c, spec, fe)
	if fe.Kind == failure.Budget {
		o.Abort = false // the run ends after the batch, with every call answered
	}
	b.results[i] = r.toolResult(c, info, nil, &o)
	r.emit(Event{Type: EventToolFinished, Turn: b.turn, Call: info, Result: ErrorResult("%s", o.ModelText)})
	return callJob{}, false
}

// early is why a call may not run before its arguments are looked at (nil:
// it may): the batch is refused (pre), the run's tool-call budget is
// exhausted (which aborts the run after the batch), or there is no such
// tool.
func (b *batch) early(c llm.ToolCall, tool Tool, pre error) error {
	max := b.r.a.cfg.Budget.MaxToolCalls
	switch {
	case pre != nil:
		return &failure.Error{Kind: failure.Budget, Source: failure.SourceAgent, Tool: c.Name,
			Message: "not run: " + failure.From(pre).Message}
	case max > 0 && b.r.ans.ToolCalls >= max:
		err := &failure.Error{Kind: failure.Budget, Source: failure.SourceAgent, Tool: c.Name,
			Message: fmt.Sprintf("not run: the run's budget of %d tool calls is exhausted", max)}
		if b.abort == nil {
			b.abort = err
		}
		return err
	case tool == nil:
		return &failure.Error{Kind: failure.UnknownTool, Source: failure.SourceAgent, Tool: c.Name,
			Message: fmt.Sprintf("there is no tool named %q; use only the tools listed", c.Name)}
	}
	return nil
}

// do runs one call and returns its outcome. inline means on the run's
// goroutine, where its progress is emitted live from the wait for the tool
// (or, in a detached run, published as it comes).
func (b *batch) do(j callJob, inline bool) callMsg {
	start := time.Now()
	cs := newCallState(b.r, b.turn, j, b.msgs, inline)
	res, o := b.r.tracedExecCall(b.ctx, j.c, j.tool, j.spec, j.info, j.perm, cs)
	cs.done()
	return callMsg{i: j.i, done: true, result: res, outcome: o, elapsed: time.Since(start), guards: cs.guards}
}

// finish handles a call's outcome and records its one result.
func (b *batch) finish(m callMsg) {
	r, info := b.r, b.infos[m.i]
	info.Elapsed = m.elapsed
	if b.journal.parked(b.turn, info, m) {
		return // no result yet: the run parks after the batch
	}
	shown := m.result
	r.emitGuards(r.ctx, b.turn, info, m.guards)
	if m.outcome != nil {
		o := r.a.pol().Handle(r.ctx, m.outcome.Err)
		r.ans.Failures++
		r.emit(Event{Type: EventFailure, Turn: b.turn, Call: info, Failure: NewFailureInfo(o)})
		m.outcome = &o
		if o.Abort && b.abort == nil {
			b.abort = o.Err
			b.cancel(o.Err)
		}
		if shown == nil {
			shown = ErrorResult("%s", o.ModelText)
		}
	}
	if m.outcome == nil && m.result != nil && m.result.Handoff != nil && (r.handoff == nil || m.i < r.handoffIdx) {
		r.handoff, r.handoffIdx = m.result.Handoff, m.i
	}
	// The event goes out as soon as the result is known; the model's copy
	// of it is rendered after.
	r.emit(Event{Type: EventToolFinished, Turn: b.turn, Call: info, Result: eventResult(shown)})
	b.results[m.i] = r.toolResult(b.calls[m.i], info, m.result, m.outcome)
	if err := b.journal.save(b.calls[m.i], b.results[m.i]); err != nil {
		b.cancel(err)
	}
}

// callEvent is the event of a call's progress report or forwarded nested
// event.
func callEvent(turn int, info *CallInfo, m callMsg) Event {
	if m.nested != nil {
		ev := nest(*m.nested)
		ev.Turn, ev.Call = turn, info
		return ev
	}
	return Event{Type: EventToolProgress, Turn: turn, Call: info, Progress: m.progress}
}

// emitCallMsg emits a call's progress report or forwarded nested event.
func (r *run) emitCallMsg(turn int, info *CallInfo, m callMsg) { r.emit(callEvent(turn, info, m)) }

// publishCallMsg publishes it to the sink only (a detached run).
func (r *run) publishCallMsg(turn int, info *CallInfo, m callMsg) {
	r.publish(callEvent(turn, info, m))
}

// checkArgs normalises and validates a call's arguments: absent or null
// arguments become {}, anything but a JSON object is refused, and the
// object is validated against the tool's input schema.
func (r *run) checkArgs(args json.RawMessage, spec ToolSpec, perm Permission) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		trimmed = json.RawMessage("{}")
	}
	bad := func(msg string) error {
		return &failure.Error{Kind: failure.InvalidArgs, Source: failure.SourceAgent, Tool: spec.Name, Message: msg}
	}
	if !json.Valid(trimmed) {
		return nil, bad("the arguments are not valid JSON; send a JSON object")
	}
	if trimmed[0] != '{' {
		return nil, bad("the arguments must be a JSON object")
	}
	if len(spec.InputSchema) > 0 && r.validates(spec, perm) {
		if err := r.a.schemas.Validate(spec.InputSchema, trimmed); err != nil {
			if errors.Is(err, schema.ErrBadSchema) {
				r.a.log.Debug().Str("tool", spec.Name).Err(err).Msg("tool has an unusable input schema; arguments not validated")
			} else {
				return nil, bad("the arguments do not match the tool's input schema: " + err.Error())
			}
		}
	}
	return trimmed, nil
}

// validates reports whether the agent validates the arguments of a call of
// spec: always, unless the tool is an MCP server's (MCP servers must
// validate their tools' arguments themselves) and the call may run without
// asking a person (who should not be asked to approve a call that cannot
// succeed).
func (r *run) validates(spec ToolSpec, perm Permission) bool {
	return spec.Source.Kind != failure.SourceMCP || perm != Allow
}

// execCall asks permission, then runs the tool under the failure policy
// with the call's timeout. It returns the tool's result and, when the call
// failed, the failure (not yet handled).
func (r *run) execCall(bctx context.Context, c llm.ToolCall, tool Tool, spec ToolSpec, info *CallInfo, perm Permission, cs *callState) (*Result, *failure.Outcome) {
	call := &Call{Run: r.id, ID: c.ID, Tool: c.Name, Source: spec.Source, state: cs, agent: r.a, toolset: r.owner[c.Name],
		elicitor: r.elicitor(), grants: &r.s.grants, idem: r.id + "/" + c.ID, parts: r.partRule(), handle: r.callHandle(c.ID)}
	// The agent's rules, then the session's over this tool (Call.GuardTools).
	var own [4]*guardSet
	sets := own[:0]
	if r.a.guardrails != nil {
		sets = append(sets, r.a.guardrails)
	}
	sets = r.s.grants.appendGuards(sets, c.Name)
	gc := GuardCheck{Run: r.id, Tool: c.Name, Source: spec.Source}
	for _, gs := range sets {
		if len(gs.call) > 0 {
			gc.Point = GuardToolCall
			args, fe := guardArgs(bctx, &r.detect, gs, gc, info.Args, &cs.guards)
			if fe != nil {
				return nil, &failure.Outcome{Err: fe}
			}
			info.Args = args
		}
	}
	if o := r.permit(bctx, call, spec, info.Args, perm); o != nil {
		return nil, o
	}
	if o := r.journal().intend(bctx, c, spec, info.Args); o != nil {
		return nil, o
	}
	timeout, timeoutErr := r.a.cfg.ToolTimeout, r.a.timeoutErr
	if spec.Timeout > 0 && spec.Timeout != timeout {
		timeout, timeoutErr = spec.Timeout, callTimeoutErr(spec.Timeout)
	}
	cctx, cancel := context.WithTimeoutCause(bctx, timeout, timeoutErr)
	defer cancel()
	cctx = context.WithValue(cctx, nestKey{}, call)

	var res *Result
	key := sourceKey(spec)
	err := r.a.execute(cctx, key, func(ctx context.Context) error {
		r.traceAttempt(ctx)
		var err error
		res, err = r.callTool(ctx, tool, info.Args, cs)
		if err == nil && res == nil {
			res = &Result{}
		}
		return err
	})
	if err != nil {
		if cctx.Err() != nil {
			return nil, r.outcomeOf(cctx, c.Name, context.Cause(cctx))
		}
		fe := failure.From(err)
		cp := *fe
		if cp.Tool == "" {
			cp.Tool = c.Name
		}
		if cp.Source == "" {
			cp.Source = failure.SourceTool
		}
		return nil, &failure.Outcome{Err: &cp}
	}
	// A tool may name a finer source of the same kind (the skill, not the
	// skills toolset); anything else is replaced by the spec's provenance.
	if res.Source.Kind != spec.Source.Kind || res.Source.Name == "" {
		res.Source = spec.Source
	} else if res.Source.Tool == "" {
		res.Source.Tool = spec.Source.Tool
	}
	for _, gs := range sets {
		if len(gs.result) > 0 {
			gc.Point = GuardToolResult
			g, fe := guardResult(bctx, &r.detect, gs, gc, res, &cs.guards)
			if fe != nil {
				return nil, &failure.Outcome{Err: fe}
			}
			res = g
		}
	}
	if res.IsError {
		return res, &failure.Outcome{Err: &failure.Error{Kind: failure.ToolError, Source: key.Source,
			Name: key.Name, Tool: c.Name, Message: "the tool reported an error"}}
	}
	return res, nil
}

// callTimeoutErr is the cause of a call that exceeds its timeout d.
func callTimeoutErr(d time.Duration) *failure.Error {
	return &failure.Error{Kind: failure.Timeout, Source: failure.SourceAgent,
		Message: fmt.Sprintf("the call did not finish within %s and was cancelled", d)}
}

// outcomeOf classifies the end of a call whose context is done.
func (r *run) outcomeOf(ctx context.Context, tool string, cause error) *failure.Outcome {
	if r.ctx.Err() != nil {
		cause = context.Cause(r.ctx)
	}
	fe := failure.From(cause)
	cp := *fe
	if cp.Tool == "" {
		cp.Tool = tool
	}
	if cp.Kind == failure.Canceled && cp.Message == "" {
		cp.Message = "the call was cancelled because the run ended"
	}
	return &failure.Outcome{Err: &cp}
}

func panicError(v any) *failure.PanicError {
	return &failure.PanicError{Value: v, Stack: debug.Stack()}
}

// permit applies the permission policy; it returns a failure when the call
// may not run.
func (r *run) permit(ctx context.Context, call *Call, spec ToolSpec, args json.RawMessage, perm Permission) *failure.Outcome {
	switch perm {
	case Allow:
		return nil
	case Deny:
		return &failure.Outcome{Err: &failure.Error{Kind: failure.PermissionDenied, Source: failure.SourceAgent, Tool: spec.Name,
			Message: "the permission policy denies this tool"}}
	}
	if r.elicitor() == nil && !r.parks() && !r.resumedAsk(call.ID) {
		return &failure.Outcome{Err: &failure.Error{Kind: failure.PermissionDenied, Source: failure.SourceAgent, Tool: spec.Name,
			Message: "this tool needs approval and no one is available to approve it"}}
	}
	ans, err := r.askPermission(ctx, call, Elicitation{Kind: ElicitPermission, Tool: spec.Name, Args: args, Source: spec.Source,
		Message: fmt.Sprintf("Allow the agent to call %s (%s)?", spec.Name, spec.Source)})
	if o := parkOutcome(err); o != nil {
		return o
	}
	if err != nil {
		return &failure.Outcome{Err: &failure.Error{Kind: failure.PermissionDenied, Source: failure.SourceAgent, Tool: spec.Name,
			Message: "approval for this tool could not be obtained", Err: err}}
	}
	if ans.Action != ElicitAccept {
		msg := "the user declined to allow this call"
		if ans.Reason != "" {
			msg += " (" + ans.Reason + ")"
		}
		return &failure.Outcome{Err: &failure.Error{Kind: failure.Declined, Source: failure.SourceAgent, Tool: spec.Name, Message: msg}}
	}
	return nil
}

// toolResult renders a call's result for the model (see envelope).
func (r *run) toolResult(c llm.ToolCall, info *CallInfo, res *Result, o *failure.Outcome) llm.ToolResult {
	var text string
	var parts []llm.Part
	isErr := false
	switch {
	case res != nil:
		text, parts = r.partRule().split(res)
		isErr = res.IsError
	case o != nil:
		text = o.ModelText
		isErr = true
	}
	if o != nil && res != nil && o.Err.Kind != failure.ToolError {
		text, parts, isErr = o.ModelText, nil, true
	}
	src := info.Source
	if res != nil && res.Source.Kind != "" {
		src = res.Source
	}
	content := envelope(c.Name, src.String(), text, isErr, r.a.cfg.MaxResultBytes)
	return llm.ToolResult{CallID: c.ID, Name: c.Name, Content: content, Parts: parts, IsError: isErr}
}
