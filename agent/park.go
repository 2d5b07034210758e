package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-dev/switchboard/failure"
)

// errQuestionExpired is the cause of the Timeout of a call whose parked
// question passed its deadline without an answer.
var errQuestionExpired = errors.New("agent: the question expired before an answer")

// errGrace ends the wait for the Elicitor when the run parks instead.
var errGrace = errors.New("agent: no answer within the grace time; the run parks")

// parks reports whether the run parks permission asks (a call outside a
// run, served by mcp/server, has no run and never parks).
func (r *run) parks() bool { return r != nil && r.d != nil && r.a.cfg.Durable.ParkAfter != 0 }

// askPermission asks a person whether a call may run: a resumed call gets
// the answer its parked question received (or a Timeout when the question
// expired); with parking, an ask without an answer within ParkAfter parks
// the call.
func (r *run) askPermission(ctx context.Context, call *Call, e Elicitation) (ElicitationResult, error) {
	if r.d != nil {
		if q, ok := r.d.answers[call.ID]; ok {
			if q.Answer != nil {
				return *q.Answer, nil
			}
			return ElicitationResult{}, &failure.Error{Kind: failure.Timeout, Source: failure.SourceAgent, Tool: call.Tool,
				Err: errQuestionExpired, Message: fmt.Sprintf("nobody answered whether it may run before %s; it did not run",
					q.Deadline.UTC().Format(time.RFC3339))}
		}
	}
	if !r.parks() {
		return call.Elicit(ctx, e)
	}
	if grace := r.a.cfg.Durable.ParkAfter; grace > 0 && r.elicitor() != nil {
		ectx, cancel := context.WithTimeoutCause(ctx, grace, errGrace)
		ans, err := call.Elicit(ectx, e)
		cancel()
		if err == nil || ctx.Err() != nil {
			return ans, err
		}
		// No answer in time, or nobody to ask now: the inbox asks.
		r.a.log.Debug().Err(err).Str("run", r.id).Str("call", call.ID).Msg("permission ask parks")
	}
	return ElicitationResult{}, r.park(ctx, call, e)
}

// park stores the question of a call and returns the call's Parked
// failure; the run parks after its batch.
func (r *run) park(ctx context.Context, call *Call, e Elicitation) error {
	d := r.d
	e.Run, e.Call = call.Run, call.ID
	if e.Source.Kind == "" {
		e.Source = call.Source
	}
	now := time.Now()
	q := &Question{V: recordVersion, ID: randomID("q_"), Agent: r.a.cfg.Name, Session: r.s.id, Run: r.id,
		Elicitation: e, Created: now, Deadline: now.Add(r.a.cfg.Durable.QuestionTTL)}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	if err := r.a.cfg.Durable.Inbox.PutQuestion(sctx, q); err != nil {
		return d.stop(err)
	}
	d.mu.Lock()
	d.parked = append(d.parked, q.ID)
	if d.parkedCalls == nil {
		d.parkedCalls = map[string]bool{}
	}
	d.parkedCalls[call.ID] = true
	d.mu.Unlock()
	return &failure.Error{Kind: failure.Parked, Source: failure.SourceAgent, Tool: call.Tool,
		Message: fmt.Sprintf("the call waits for a person's answer to question %s", q.ID)}
}

// parkOutcome is the outcome of a permission ask that parked or whose
// question expired (nil for anything else).
func parkOutcome(err error) *failure.Outcome {
	if errors.Is(err, failure.Parked) || errors.Is(err, errQuestionExpired) {
		return &failure.Outcome{Err: failure.From(err)}
	}
	return nil
}

// parkedCall reports a call that parked: its failure event says so, and it
// gets no result until the run resumes.
func (r *run) parkedCall(turn int, info *CallInfo, m callMsg) bool {
	r.d.mu.Lock()
	parked := r.d.parkedCalls[info.ID]
	r.d.mu.Unlock()
	if !parked {
		return false
	}
	fe := &failure.Error{Kind: failure.Parked, Source: failure.SourceAgent, Tool: info.Tool,
		Message: "the call waits for a person's answer; the run resumes when it comes"}
	if m.outcome != nil && errors.Is(m.outcome.Err, failure.Parked) {
		fe = m.outcome.Err
	}
	o := r.a.pol().Handle(r.ctx, fe)
	r.emit(Event{Type: EventFailure, Turn: turn, Call: info, Failure: NewFailureInfo(o)})
	return true
}

// Inbox lists the questions this agent's parked runs wait on, oldest
// first (questions of other agents sharing the store are left out).
func (a *Agent) Inbox(ctx context.Context) ([]Question, error) {
	st, err := a.inbox()
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	all, err := st.PendingQuestions(sctx)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, q := range all {
		if q.Agent == a.cfg.Name {
			out = append(out, q)
		}
	}
	return out, nil
}

// Answer records a person's answer to the parked question id and resumes
// its run in this process, returning as Resume does. The answer is
// recorded once: a second answer is a Conflict, one after the question's
// deadline a Timeout (the run then resumes with a Timeout for that call
// when it is next resumed).
func (a *Agent) Answer(ctx context.Context, id string, answer ElicitationResult) (*Answer, error) {
	st, err := a.inbox()
	if err != nil {
		return nil, err
	}
	switch answer.Action {
	case ElicitAccept, ElicitDecline, ElicitCancel:
	default:
		return nil, failure.New(failure.InvalidArgs, failure.SourceAgent,
			fmt.Sprintf("the answer's action is %q; want accept, decline or cancel", answer.Action))
	}
	sctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	q, err := st.LoadQuestion(sctx, id)
	if err != nil {
		return nil, err
	}
	if q.Agent != a.cfg.Name {
		return nil, &failure.Error{Kind: failure.InvalidArgs, Source: failure.SourceAgent,
			Message: fmt.Sprintf("question %q belongs to agent %q, not %q", id, q.Agent, a.cfg.Name)}
	}
	if q, err = st.AnswerQuestion(sctx, id, answer); err != nil {
		return nil, err
	}
	return a.Resume(ctx, q.Run)
}

// resumedAsk reports whether the call's permission question was answered
// (or expired) while the run was parked.
func (r *run) resumedAsk(call string) bool {
	if r.d == nil {
		return false
	}
	_, ok := r.d.answers[call]
	return ok
}

// parksElicitation reports whether a tool's own question (Call.Elicit)
// may park the run: with parking on, for a read-only or idempotent tool,
// which the resumed run calls again (its earlier questions are then
// answered from the store, in order).
func (r *run) parksElicitation(c *Call) bool {
	if !r.parks() {
		return false
	}
	t := r.index[c.Tool]
	if t == nil {
		return false
	}
	spec := t.Spec()
	return spec.ReadOnly || spec.Idempotent
}

// elicitOrPark answers a tool's question from the store when the resumed
// run has its answer, else asks the Elicitor for ParkAfter, else parks.
func (r *run) elicitOrPark(ctx context.Context, c *Call, e Elicitation) (ElicitationResult, error) {
	e.Run, e.Call = c.Run, c.ID
	if e.Source.Kind == "" {
		e.Source = c.Source
	}
	d := r.d
	d.mu.Lock()
	if qs := d.replay[c.ID]; len(qs) > 0 {
		q := qs[0]
		d.replay[c.ID] = qs[1:]
		d.mu.Unlock()
		if q.Answer != nil {
			return *q.Answer, nil
		}
		return ElicitationResult{}, &failure.Error{Kind: failure.Timeout, Source: failure.SourceAgent, Tool: c.Tool,
			Err: errQuestionExpired, Message: "nobody answered the question before its deadline"}
	}
	d.mu.Unlock()
	if grace := r.a.cfg.Durable.ParkAfter; grace > 0 && r.elicitor() != nil {
		ectx, cancel := context.WithTimeoutCause(ctx, grace, errGrace)
		ans, err := r.elicitor().Elicit(ectx, e)
		cancel()
		if err == nil || ctx.Err() != nil {
			return ans, err
		}
	}
	return ElicitationResult{}, r.park(ctx, c, e)
}
