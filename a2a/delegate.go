package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus/task"
	"github.com/switchboard-dev/switchboard/failure"
)

// delegateTool sends the model's message to a peer (optionally naming a
// skill) and waits for the remote task to finish.
type delegateTool struct {
	r     *remote
	skill string
	spec  agent.ToolSpec
}

func (t *delegateTool) Spec() agent.ToolSpec { return t.spec }

type delegateArgs struct {
	Message   string `json:"message"`
	ContextID string `json:"context_id"`
	TaskID    string `json:"task_id"`
}

// Call delegates one task.
func (t *delegateTool) Call(ctx context.Context, raw json.RawMessage) (*agent.Result, error) {
	var in delegateArgs
	if err := json.Unmarshal(raw, &in); err != nil || strings.TrimSpace(in.Message) == "" {
		return agent.ErrorResult("invalid arguments: send {\"message\": \"...\"} with a non-empty message"), nil
	}
	msg := a2ago.NewMessage(a2ago.MessageRoleUser, a2ago.NewTextPart(in.Message))
	if t.r.peer.Tenant != "" {
		ctx = a2ago.AttachTenant(ctx, t.r.peer.Tenant)
	}
	call, _ := agent.CallFromContext(ctx)
	if key := call.IdempotencyKey(); key != "" {
		// The same call sends the same message: a resend (a retry, a resumed
		// run) is recognisable by the peer.
		msg.ID = key
	}
	msg.ContextID = in.ContextID
	msg.TaskID = a2ago.TaskID(in.TaskID)
	if t.skill != "" {
		msg.SetMeta("skill", t.skill)
	}
	d := &delegation{r: t.r, tool: t.spec.Name, st: newTaskState(), call: call, ctx: ctx}
	return d.run(ctx, msg)
}

// delegation is one tool call's conversation with a peer: possibly several
// messages to the same task (input-required turns).
type delegation struct {
	r    *remote
	tool string
	st   *taskState
	call *agent.Call // nil outside an agent run
	ctx  context.Context
	// stale is set while a message answering an interrupted state
	// (input-required, auth-required) has had no status from the peer yet:
	// that state is the one answered, not a new question. Artifact updates
	// carry no state, so they do not clear it.
	stale bool
}

// settled reports whether the task needs nothing more from the peer for
// now (see taskState.settled), not counting a stale interrupted state.
func (d *delegation) settled() bool { return d.st.settled() && !d.stale }

func (d *delegation) fail(kind failure.Kind, op, msg string, err error) *failure.Error {
	return &failure.Error{Kind: kind, Source: failure.SourceA2A, Name: d.r.peer.Name, Tool: d.tool, Op: op,
		Message: msg, Err: err, Retryable: kind.Retryable()}
}

func (d *delegation) run(ctx context.Context, msg *a2ago.Message) (*agent.Result, error) {
	for {
		if err := d.send(ctx, msg); err != nil {
			return nil, d.onError(ctx, err)
		}
		if d.st.reply != nil {
			return d.st.result(d.r.peer.Name), nil
		}
		if err := d.settle(ctx); err != nil {
			return nil, d.onError(ctx, err)
		}
		switch d.st.state {
		case a2ago.TaskStateCompleted:
			return d.st.result(d.r.peer.Name), nil
		case a2ago.TaskStateInputRequired, a2ago.TaskStateAuthRequired:
			if d.r.ts.cfg.AskModel && d.st.state == a2ago.TaskStateInputRequired {
				return d.askModel(), nil
			}
			next, err := d.ask(ctx)
			if err != nil {
				return nil, d.onError(ctx, err)
			}
			msg = next
		case a2ago.TaskStateFailed, a2ago.TaskStateRejected, a2ago.TaskStateCanceled:
			return nil, d.fail(failure.Rejected, "task", fmt.Sprintf("the remote task %s was %s: %s",
				d.st.id, stateWord(d.st.state), orNone(d.st.statusText)), nil)
		default:
			return nil, d.fail(failure.Protocol, "task", fmt.Sprintf("the remote task ended in state %q", d.st.state), nil)
		}
	}
}

// onError cancels the remote task when the call itself was cancelled, and
// classifies the failure.
func (d *delegation) onError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		d.cancelRemote(ctx)
		fe := failure.From(context.Cause(ctx))
		c := *fe
		if c.Source == "" {
			c.Source, c.Name = failure.SourceA2A, d.r.peer.Name
		}
		return &c
	}
	fe := classify(err, d.r.peer.Name, d.tool, "send")
	if d.st.id != "" && (fe.Kind == failure.Transient || fe.Retryable) {
		// The task exists remotely: retrying the call (the agent's policy
		// would) would start a second task. Report it as lost instead.
		return &failure.Error{Kind: failure.Unavailable, Source: failure.SourceA2A, Name: d.r.peer.Name, Tool: d.tool,
			Op: fe.Op, Err: fe, Message: fmt.Sprintf("lost contact with the remote task %s after retries; it may still be running", d.st.id)}
	}
	return fe
}

// cancelRemote sends CancelTask for the current task, bounded, after the
// call's context ended.
func (d *delegation) cancelRemote(ctx context.Context) {
	if d.st.id == "" || d.st.state.Terminal() {
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.r.ts.cfg.CancelTimeout)
	defer cancel()
	err := d.r.ts.pol().Execute(cctx, d.r.key, func(ctx context.Context) error {
		_, err := d.r.client.CancelTask(ctx, &a2ago.CancelTaskRequest{ID: d.st.id})
		if errors.Is(err, a2ago.ErrTaskNotCancelable) || errors.Is(err, a2ago.ErrTaskNotFound) {
			return nil
		}
		return classifyErr(err, d.r.peer.Name, d.tool, "cancel")
	})
	if err != nil {
		d.r.ts.pol().Handle(cctx, err)
		return
	}
	d.r.ts.log.Debug().Str("peer", d.r.peer.Name).Str("task", string(d.st.id)).Msg("remote task cancelled")
}

// send sends msg (streaming when the peer streams) and applies what comes
// back. A stream that breaks after the task is known is not an error here:
// settle resumes it. The message is sent again only when the peer cannot
// have acted on it (see sendFailed): a resend would otherwise start a second
// remote task, or answer a question twice.
func (d *delegation) send(ctx context.Context, msg *a2ago.Message) error {
	req := &a2ago.SendMessageRequest{Message: msg}
	d.stale = d.st.id != "" && !d.st.state.Terminal() && d.st.settled() && d.st.reply == nil
	if !d.r.streaming {
		return d.r.execute(ctx, func(ctx context.Context) error {
			ctx, dl := withDelivery(ctx)
			res, err := d.r.client.SendMessage(ctx, req)
			if err != nil {
				return d.sendFailed(ctx, dl, classify(err, d.r.peer.Name, d.tool, "send"))
			}
			return d.apply(res)
		})
	}
	d.st.dropped = false
	return d.r.execute(ctx, func(ctx context.Context) error {
		ctx, dl := withDelivery(ctx)
		before := d.st.events
		for ev, err := range d.r.client.SendStreamingMessage(ctx, req) {
			if err != nil {
				fe := classify(err, d.r.peer.Name, d.tool, "stream")
				if d.st.id != "" && d.st.events > before && ctx.Err() == nil && (!isA2AError(err) || fe.Kind == failure.Transient) {
					// The task is known from this stream: resume it, never
					// resend.
					d.st.dropped = true
					d.r.ts.log.Debug().Err(err).Str("peer", d.r.peer.Name).Msg("stream dropped; resuming")
					return nil
				}
				return d.sendFailed(ctx, dl, fe)
			}
			if err := d.apply(ev); err != nil {
				return err
			}
			if d.settled() {
				// Done, or the peer needs an answer (it may keep the stream
				// open through auth-required): stop reading.
				return nil
			}
		}
		if d.st.events == before {
			return d.fail(failure.Protocol, "stream", "the peer ended the stream without sending any event", nil)
		}
		if d.st.id != "" && !d.settled() {
			d.st.dropped = true // the stream ended early
		}
		return nil
	})
}

// sendFailed decides whether a failed send may be retried by the policy:
// only when the peer cannot have acted on the message (dl.unprocessed).
// Otherwise the outcome is in doubt: the peer may have created the task (or
// taken the answer) before the error, so the failure is reported, not
// retried, and not retryable by the caller either.
func (d *delegation) sendFailed(ctx context.Context, dl *delivery, fe *failure.Error) error {
	if fe.Tool == "" {
		c := *fe
		c.Tool, c.Op = d.tool, "send"
		fe = &c
	}
	if ctx.Err() != nil || !(fe.Retryable || fe.Kind.Retryable()) || dl.unprocessed() {
		return fe
	}
	what := "it may have started a remote task"
	if d.st.id != "" {
		what = fmt.Sprintf("it may have reached the remote task %s", d.st.id)
	}
	detail := fe.Message
	if detail == "" {
		detail = fe.Kind.String()
	}
	return &failure.Error{Kind: failure.Unavailable, Source: failure.SourceA2A, Name: d.r.peer.Name, Tool: d.tool,
		Op: fe.Op, Err: fe, Message: fmt.Sprintf("the peer failed while handling the message (%s); %s, "+
			"so it was not sent again: the outcome is unknown", detail, what)}
}

// settle brings the task to a terminal or interrupted state: resume a
// dropped stream with SubscribeToTask, and poll GetTask when the peer does
// not stream or cannot resubscribe.
func (d *delegation) settle(ctx context.Context) error {
	if d.settled() {
		return nil
	}
	if d.st.id == "" {
		return d.fail(failure.Protocol, "send", "the peer answered with neither a task nor a message", nil)
	}
	if d.r.streaming {
		err := d.r.execute(ctx, func(ctx context.Context) error {
			d.st.dropped = false
			for ev, err := range d.r.client.SubscribeToTask(ctx, &a2ago.SubscribeToTaskRequest{ID: d.st.id}) {
				if err != nil {
					return classifyErr(err, d.r.peer.Name, d.tool, "resubscribe")
				}
				if err := d.apply(ev); err != nil {
					return err
				}
				if d.settled() {
					return nil
				}
			}
			if !d.settled() {
				return d.fail(failure.Transient, "resubscribe", "the resumed stream ended before the task did", nil)
			}
			return nil
		})
		if err == nil || ctx.Err() != nil {
			return err
		}
		d.r.ts.log.Debug().Err(err).Str("peer", d.r.peer.Name).Msg("resubscribe failed; polling")
	}
	return d.poll(ctx)
}

func (d *delegation) poll(ctx context.Context) error {
	tick := time.NewTicker(d.r.ts.cfg.PollInterval)
	defer tick.Stop()
	for {
		err := d.r.execute(ctx, func(ctx context.Context) error {
			t, err := d.r.client.GetTask(ctx, &a2ago.GetTaskRequest{ID: d.st.id})
			if err != nil {
				return classifyErr(err, d.r.peer.Name, d.tool, "get task")
			}
			return d.apply(t)
		})
		if err != nil {
			return err
		}
		if d.settled() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// ask turns input-required or auth-required into an elicitation, and the
// answer into the next message of the same task and context.
func (d *delegation) ask(ctx context.Context) (*a2ago.Message, error) {
	kind := agent.ElicitInput
	if d.st.state == a2ago.TaskStateAuthRequired {
		kind = agent.ElicitAuth
	}
	question := d.st.statusText
	if question == "" {
		question = fmt.Sprintf("The remote agent %q needs more input to continue.", d.r.card.Name)
	}
	ans, err := d.call.Elicit(ctx, agent.Elicitation{Kind: kind, Message: question, ID: string(d.st.id),
		Source: agent.Provenance{Kind: failure.SourceA2A, Name: d.r.peer.Name}})
	if err != nil {
		d.cancelRemote(ctx)
		return nil, d.fail(failure.Declined, "elicit", "no one could answer the remote agent's question", err)
	}
	if ans.Action != agent.ElicitAccept {
		d.cancelRemote(ctx)
		msg := "the user did not answer the remote agent's question: " + question
		if ans.Reason != "" {
			msg += " (" + ans.Reason + ")"
		}
		return nil, d.fail(failure.Declined, "elicit", msg, nil)
	}
	parts := answerParts(ans.Content)
	m := a2ago.NewMessageForTask(a2ago.MessageRoleUser, a2ago.TaskInfo{TaskID: d.st.id, ContextID: d.st.contextID}, parts...)
	return m, nil
}

// askModel returns the remote agent's question to the model, with what it
// needs to answer on the same task.
func (d *delegation) askModel() *agent.Result {
	q := d.st.statusText
	if q == "" {
		q = "(the remote agent gave no question)"
	}
	return &agent.Result{Parts: []agent.Part{{Type: agent.PartText, Text: fmt.Sprintf(
		"The remote agent %q needs input before it can continue: %s\nTo answer, call %s again with "+
			"{\"message\": <your answer>, \"task_id\": %q, \"context_id\": %q}.",
		d.r.card.Name, q, d.tool, d.st.id, d.st.contextID)}}}
}

// answerParts renders an elicitation answer as message parts: the text of
// {"text": ...} as a text part, anything else as a data part.
func answerParts(content map[string]any) []*a2ago.Part {
	if s, ok := content["text"].(string); ok && len(content) == 1 {
		return []*a2ago.Part{a2ago.NewTextPart(s)}
	}
	if len(content) == 0 {
		return []*a2ago.Part{a2ago.NewTextPart("")}
	}
	return []*a2ago.Part{a2ago.NewDataPart(content)}
}

// apply folds one event into the task state and reports progress.
func (d *delegation) apply(ev a2ago.Event) error {
	if ev == nil {
		return d.fail(failure.Protocol, "stream", "the peer sent an empty event", nil)
	}
	if id := ev.TaskInfo().TaskID; id != "" && d.st.id != "" && id != d.st.id {
		return d.fail(failure.Protocol, "stream", fmt.Sprintf("the peer sent an event of another task (%s)", id), nil)
	}
	if _, ok := ev.(*a2ago.TaskArtifactUpdateEvent); !ok {
		d.stale = false
	}
	if p := d.st.apply(ev); p != nil {
		d.call.ReportProgress(*p) // nil-safe outside a run
	}
	d.publish(ev)
	return nil
}

// publish puts a remote task update on the bus, when one is configured. A
// failure to publish is handled by the policy and does not fail the call.
func (d *delegation) publish(ev a2ago.Event) {
	b := d.r.ts.cfg.Bus
	if b == nil || d.st.id == "" {
		return
	}
	data, err := json.Marshal(a2ago.StreamResponse{Event: ev})
	if err != nil {
		return
	}
	u := task.Update{Task: string(d.st.id), Context: d.st.contextID, Kind: "status",
		State: busState(d.st.state), Final: d.st.state.Terminal(), Message: d.st.statusText, Data: data}
	if _, ok := ev.(*a2ago.TaskArtifactUpdateEvent); ok {
		u.Kind, u.Final, u.Message = "artifact", false, ""
	}
	if err := b.PublishTask(context.WithoutCancel(d.ctx), u); err != nil {
		d.r.ts.pol().Handle(d.ctx, err)
	}
}

// busState is a task state as the bus names it ("input-required").
func busState(s a2ago.TaskState) string { return strings.ReplaceAll(stateWord(s), " ", "-") }
