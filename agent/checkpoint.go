package agent

import (
	"context"
	"fmt"
	"iter"
	"slices"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// Resume continues the stored run id from its latest checkpoint, in this
// process, and returns as Session.Run does. The agent must have the
// configuration of the one that started the run (its name, model and
// tools). A finished run returns its outcome again; a parked run whose
// questions are still pending returns its Parked failure at once; two
// processes resuming one run at once: one continues, the other gets a
// Conflict. Calls that were started and have no recorded result are not run
// again unless their tool is idempotent: their result says the outcome is
// unknown (failure kind InDoubt).
func (a *Agent) Resume(ctx context.Context, id string) (*Answer, error) {
	var ans *Answer
	var err error
	for _, e := range a.resume(ctx, id, func(x *Answer) { ans = x }) {
		if e != nil {
			err = e
		}
	}
	return ans, err
}

// ResumeStream is Resume yielding the run's events, as Session.Stream does.
func (a *Agent) ResumeStream(ctx context.Context, id string) iter.Seq2[Event, error] {
	return a.resume(ctx, id, nil)
}

func (a *Agent) resume(ctx context.Context, id string, done func(*Answer)) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		st, err := a.runs()
		if err != nil {
			yield(Event{}, err)
			return
		}
		lctx, cancel := context.WithTimeout(ctx, storeTimeout)
		cp, err := st.LoadCheckpoint(lctx, id)
		cancel()
		if err != nil {
			yield(Event{}, err)
			return
		}
		s := &Session{a: a, id: cp.Session}
		body := func(r *run, _ []llm.Message) ([]llm.Message, error) {
			hist, base, err := r.resumeRun(cp)
			if r.d == nil {
				return nil, err
			}
			return r.durableEnd(nil, hist, base, err)
		}
		for ev, err := range s.streamRun(ctx, cp.Run, cp.Input, cp.Trace, done, body) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

// resumeRun continues a run from cp. It returns the history and the
// length of the session's history before the run.
func (r *run) resumeRun(cp *Checkpoint) ([]llm.Message, int, error) {
	if err := checkVersion("run", cp.Run, cp.V); err != nil {
		return nil, 0, err
	}
	if cp.Agent != r.a.cfg.Name {
		return nil, 0, &failure.Error{Kind: failure.Config, Source: failure.SourceAgent,
			Message: fmt.Sprintf("run %q belongs to agent %q, not %q", cp.Run, cp.Agent, r.a.cfg.Name)}
	}
	owner, expect := r.takeOwner()
	if expect != 0 && cp.Revision != expect {
		return nil, 0, movedOn(cp, expect)
	}
	switch cp.State {
	case RunDone, RunFailed:
		return nil, 0, r.replayEnd(cp)
	case RunParked:
		d, pending, err := r.questions(cp)
		if err != nil {
			return nil, 0, err
		}
		if len(pending) > 0 {
			r.ans.Question = pending[0]
			return nil, 0, parkedErr(pending)
		}
		r.d = d
	default:
		r.d = &durableRun{}
	}
	d := r.d
	d.runs, d.owner, d.cp, d.cpRev, d.intended = r.a.cfg.Durable.Runs, owner, *cp, cp.Revision, map[string]bool{}
	d.cp.Owner, d.cp.State, d.cp.Question, d.cp.Questions = d.owner, RunRunning, "", nil
	if err := r.saveCheckpoint(); err != nil { // take the run over
		r.d = nil
		return nil, 0, err
	}
	r.watchHandover()
	hist, err := r.resumeHistory(cp)
	if err != nil {
		return nil, 0, d.stop(err)
	}
	r.a.log.Info().Str("run", r.id).Str("session", cp.Session).Str("from", string(cp.State)).Int("turn", cp.Turn).Msg("run resumed")
	r.s.grants.set(cp.Grants)
	if err := r.s.grants.setGuarded(r.a, cp.Guarded); err != nil {
		return nil, 0, d.stop(err)
	}
	r.ans.Turns, r.ans.Usage, r.ans.Cost, r.ans.ToolCalls, r.ans.Failures = cp.Turn, cp.Usage, cp.Cost, cp.ToolCalls, cp.Failures
	if cp.Output != nil {
		r.in.Output = cp.Output
	}
	r.system = r.systemPrompt()
	r.emit(Event{Type: EventRunStarted, Text: cp.Input, Parts: eventParts(inputParts(cp))})
	last := cp.Messages[len(cp.Messages)-1]
	switch {
	case last.Role == llm.RoleAssistant && len(last.ToolCalls) > 0:
		hist, err = r.resumeBatch(hist, cp, last.ToolCalls)
		return hist, cp.Base, err
	case last.Role == llm.RoleAssistant: // answered, not yet committed
		r.ans.Text = last.Text
		fix, err := r.typedAnswer(last.Text)
		if err != nil {
			return hist, cp.Base, err
		}
		if fix != nil {
			hist, err = r.turns(append(hist, *fix), cp.Base, cp.Turn+1)
			return hist, cp.Base, err
		}
		if err := r.commit(hist, cp.Base); err != nil {
			return hist, cp.Base, err
		}
		r.final(cp.Turn)
		return hist, cp.Base, nil
	}
	hist, err = r.turns(hist, cp.Base, cp.Turn+1)
	return hist, cp.Base, err
}

// resumeHistory is the session's history up to the run and the run's
// messages so far; the session must still be held by the run.
func (r *run) resumeHistory(cp *Checkpoint) ([]llm.Message, error) {
	ctx, cancel := r.storeCtx()
	defer cancel()
	rec, err := r.a.cfg.Durable.Sessions.LoadSession(ctx, cp.Session)
	if err != nil {
		return nil, err
	}
	if rec.Run != cp.Run || len(rec.History) != cp.Base || len(cp.Messages) == 0 {
		return nil, &failure.Error{Kind: failure.Conflict, Source: failure.SourceAgent, Op: "resume",
			Message: fmt.Sprintf("session %q no longer holds run %q as it was checkpointed", cp.Session, cp.Run)}
	}
	return append(rec.History, cp.Messages...), nil
}

// resumeBatch finishes the batch of tool calls the run was in, then goes
// on with the next turn.
func (r *run) resumeBatch(hist []llm.Message, cp *Checkpoint, calls []llm.ToolCall) ([]llm.Message, error) {
	d := r.d
	ctx, cancel := r.storeCtx()
	recs, err := d.runs.LoadCalls(ctx, cp.Run)
	cancel()
	if err != nil {
		return hist, d.stop(err)
	}
	d.known, d.intents = map[string]llm.ToolResult{}, map[string]CallRecord{}
	for _, res := range cp.Results {
		d.known[res.CallID] = res
	}
	for _, c := range recs {
		d.intents[c.Call] = c
		if _, ok := d.known[c.Call]; !ok && c.Result != nil {
			d.known[c.Call] = *c.Result
			d.cp.Results = append(d.cp.Results, *c.Result)
		}
	}
	turn, base := cp.Turn, cp.Base
	r.gatherTools()
	abort := r.overBudget()
	results, callAbort := r.runCalls(turn, slices.Clone(calls), abort)
	d.known, d.intents, d.answers, d.replay = nil, nil, nil, nil
	if err := r.halted(); err != nil {
		return hist, err
	}
	hist = append(hist, llm.Message{Role: llm.RoleTool, ToolResults: results})
	switch {
	case abort != nil:
		return r.closeHistory(hist, base, r.handle(abort, nil).Err)
	case callAbort != nil:
		return r.closeHistory(hist, base, failure.From(callAbort))
	case r.handoff != nil:
		h := r.handoff
		if h.Context == handoffFull {
			h.History = slices.Clone(hist)
		}
		r.ans.Handoff = h
		if err := r.commit(hist, base); err != nil {
			return hist, err
		}
		r.emit(Event{Type: EventHandoff, Turn: turn, Handoff: h})
		r.final(turn)
		return hist, nil
	}
	return r.turns(hist, base, turn+1)
}

// questions loads the questions of a parked run: the resolved ones (an
// answer, or past their deadline) become the resumed attempt's answers
// (permission asks by call, tools' own questions by call in order), and
// the ids still pending are returned.
func (r *run) questions(cp *Checkpoint) (*durableRun, []string, error) {
	ids := cp.Questions
	if len(ids) == 0 && cp.Question != "" {
		ids = []string{cp.Question}
	}
	ctx, cancel := r.storeCtx()
	defer cancel()
	d := &durableRun{answers: map[string]*Question{}, replay: map[string][]*Question{}}
	var pending []string
	var asked []*Question
	inbox := r.a.cfg.Durable.Inbox
	if len(ids) > 0 && inbox == nil {
		return nil, nil, &failure.Error{Kind: failure.Config, Source: failure.SourceAgent, Op: "resume",
			Message: fmt.Sprintf("run %q is parked on questions and the agent has no agent.Config.Durable.Inbox", cp.Run)}
	}
	for _, id := range ids {
		q, err := inbox.LoadQuestion(ctx, id)
		if err != nil {
			return nil, nil, err
		}
		if q.Answer == nil && r.start.Before(q.Deadline) {
			pending = append(pending, id)
			continue
		}
		d.carry = append(d.carry, id)
		if q.Elicitation.Kind == ElicitPermission {
			d.answers[q.Elicitation.Call] = q
		} else {
			asked = append(asked, q)
		}
	}
	slices.SortStableFunc(asked, func(a, b *Question) int { return a.Created.Compare(b.Created) })
	for _, q := range asked {
		d.replay[q.Elicitation.Call] = append(d.replay[q.Elicitation.Call], q)
	}
	return d, pending, nil
}

// replayEnd returns a finished run's outcome again (recording its end in
// the session if a crash left that undone).
func (r *run) replayEnd(cp *Checkpoint) error {
	r.d = nil
	rec := *cp
	if err := r.finishStored(&rec); err != nil {
		return err
	}
	if cp.State == RunFailed {
		var k failure.Kind
		_ = k.UnmarshalText([]byte(cp.Error))
		return &failure.Error{Kind: k, Source: failure.SourceAgent, Op: "resume",
			Message: fmt.Sprintf("run %q ended before with a failure (%s)", cp.Run, cp.Error)}
	}
	if cp.Answer != nil {
		r.ans = *cp.Answer
	}
	r.ans.Run = r.id
	r.emit(Event{Type: EventRunStarted, Text: cp.Input, Parts: eventParts(inputParts(cp))})
	r.final(cp.Turn)
	return nil
}

// finishStored records a finished run's end in its session if the session
// still holds the run.
func (r *run) finishStored(cp *Checkpoint) error {
	ctx, cancel := r.storeCtx()
	defer cancel()
	rec, err := r.a.cfg.Durable.Sessions.LoadSession(ctx, cp.Session)
	if err != nil || rec.Run != cp.Run {
		return nil // gone, or its end is recorded
	}
	return r.finishSession(cp)
}
