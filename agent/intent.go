package agent

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// recordIntent writes the intent of a call that is not read-only before it
// runs; a call whose intent cannot be written does not run. A resumed
// idempotent call runs again under the intent it has.
func (r *run) recordIntent(ctx context.Context, c llm.ToolCall, spec ToolSpec, args json.RawMessage) *failure.Outcome {
	if r.d == nil {
		return nil
	}
	d := r.d
	if _, ok := d.intents[c.ID]; ok && spec.ReadOnly {
		// A read-only call with an intent (its handle, Call.SaveHandle):
		// its result goes with it.
		d.mu.Lock()
		d.intended[c.ID] = true
		d.mu.Unlock()
		return nil
	}
	if spec.ReadOnly {
		return nil
	}
	notRun := func(err error) *failure.Outcome {
		fe := failure.From(err)
		return &failure.Outcome{Err: &failure.Error{Kind: fe.Kind, Source: failure.SourceAgent, Tool: c.Name, Op: "record intent",
			Err: err, Message: "the call was not started: the run could not record it, and stops"}}
	}
	if err := d.halted(); err != nil {
		return notRun(err)
	}
	if _, ok := d.intents[c.ID]; ok {
		d.mu.Lock()
		d.intended[c.ID] = true
		d.mu.Unlock()
		return nil
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	err := d.runs.PutIntent(sctx, &CallRecord{V: recordVersion, Run: r.id, Call: c.ID, Tool: c.Name, Args: args, Idempotent: spec.Idempotent})
	if errors.Is(err, failure.Conflict) && !spec.Idempotent {
		// Another attempt at this run (one this process took the run from,
		// or one taking it now) started the call: its outcome is not ours
		// to know, and it does not run again.
		return &failure.Outcome{Err: &failure.Error{Kind: failure.InDoubt, Source: failure.SourceAgent, Tool: c.Name,
			Op: "record intent", Err: err}}
	}
	if err != nil && !errors.Is(err, failure.Conflict) {
		return notRun(d.stop(err))
	}
	d.mu.Lock()
	d.intended[c.ID] = true
	d.mu.Unlock()
	return nil
}

// saveResult records a call's result: a call with an intent in its call
// record (which is that result's checkpoint: a resume reads it), any other
// in the run's checkpoint.
func (r *run) saveResult(c llm.ToolCall, res llm.ToolResult) error {
	d := r.d
	if err := d.halted(); err != nil {
		return err
	}
	d.mu.Lock()
	intended := d.intended[c.ID]
	d.mu.Unlock()
	d.cp.Results = append(d.cp.Results, res)
	d.cp.Failures = r.ans.Failures
	if !intended {
		return r.saveCheckpoint()
	}
	ctx, cancel := r.storeCtx()
	defer cancel()
	err := d.runs.PutCallResult(ctx, &CallRecord{Run: r.id, Call: c.ID, Result: &res})
	if err != nil && !errors.Is(err, failure.Conflict) {
		return d.stop(err)
	}
	return nil
}

// resumeCall settles a call of a resumed batch that needs no run: one with
// a known result gets it again, and one that was started (it has an
// intent) but has no result and is not idempotent is in doubt: it is not
// run again, and its result says its outcome is unknown. It reports
// whether the call is settled.
func (r *run) resumeCall(turn int, c llm.ToolCall, info *CallInfo, results []llm.ToolResult, i int) bool {
	d := r.d
	if res, ok := d.known[c.ID]; ok {
		r.ans.ToolCalls++
		results[i] = res
		shown := TextResult(res.Content)
		shown.IsError = res.IsError
		r.emit(Event{Type: EventToolFinished, Turn: turn, Call: info, Result: shown})
		return true
	}
	rec, ok := d.intents[c.ID]
	if !ok || rec.Idempotent || len(rec.Handle) > 0 {
		// Run again: an idempotent call from the start, a call with a
		// handle on its work continuing it (Call.Handle).
		return false
	}
	r.ans.ToolCalls++
	d.mu.Lock()
	d.intended[c.ID] = true
	d.mu.Unlock()
	o := r.handle(&failure.Error{Kind: failure.InDoubt, Source: failure.SourceAgent, Tool: c.Name, Op: "resume"}, info)
	results[i] = r.toolResult(c, info, nil, &o)
	r.emit(Event{Type: EventToolFinished, Turn: turn, Call: info, Result: ErrorResult("%s", o.ModelText)})
	_ = r.saveResult(c, results[i]) // a failure halts the run after the batch
	return true
}

// callHandle is the handle the resumed call id was recorded with (nil when
// the run is not resuming it, or it recorded none).
func (r *run) callHandle(id string) json.RawMessage {
	if r.d == nil {
		return nil
	}
	if rec, ok := r.d.intents[id]; ok && rec.Result == nil {
		return rec.Handle
	}
	return nil
}
