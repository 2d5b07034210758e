package a2a

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"sync"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/telemetry"
)

// executor runs the agent for a2a-go: one agent run per task, which
// outlives an Execute call when it waits for input.
type executor struct{ s *Server }

var _ a2asrv.AgentExecutor = (*executor)(nil)

// taskRun is an agent run serving one task.
type taskRun struct {
	id       a2ago.TaskID
	artifact a2ago.ArtifactID // the answer's artifact
	ctx      context.Context
	cancel   context.CancelFunc
	out      chan runItem  // never closed: tools may still write after the run; runItemBuffer deep
	done     chan struct{} // closed when the run's goroutine ends
	s        *Server

	mu        sync.Mutex
	pending   *question
	cancelled bool
}

// runItem is what a run tells the Execute pumping it: an event, the run's
// error, or a question for the client.
type runItem struct {
	ev      agent.Event
	err     error
	q       *question
	resumed bool // an auth answer arrived
}

type question struct {
	e     agent.Elicitation
	reply chan agent.ElicitationResult
}

func agentText(info a2ago.TaskInfoProvider, text string) *a2ago.Message {
	return a2ago.NewMessageForTask(a2ago.MessageRoleAgent, info, a2ago.NewTextPart(text))
}

func (s *Server) lookupRun(id a2ago.TaskID) *taskRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs[id]
}

// Execute starts or continues the task's run and streams its events until
// the task ends or needs input.
func (e *executor) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2ago.Event, error] {
	s := e.s
	return func(yield func(a2ago.Event, error) bool) {
		if ec.StoredTask == nil {
			text, err := inputText(ec.Message)
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(a2ago.NewSubmittedTask(ec, ec.Message), nil) {
				return
			}
			tr := s.startRun(ctx, ec, text)
			if !yield(a2ago.NewStatusUpdateEvent(ec, a2ago.TaskStateWorking, nil), nil) {
				tr.cancel()
				return
			}
			s.pump(ctx, ec, tr, yield)
			return
		}
		switch ec.StoredTask.Status.State {
		case a2ago.TaskStateInputRequired, a2ago.TaskStateAuthRequired:
		default:
			yield(nil, fmt.Errorf("task %s is %s and is not waiting for input: %w", ec.TaskID,
				stateWord(ec.StoredTask.Status.State), a2ago.ErrInvalidParams))
			return
		}
		ans, err := parseAnswer(ec.Message)
		if err != nil {
			yield(nil, err)
			return
		}
		tr := s.lookupRun(ec.TaskID)
		if tr == nil || !tr.answer(ans) {
			yield(a2ago.NewStatusUpdateEvent(ec, a2ago.TaskStateFailed,
				agentText(ec, "the run waiting for this answer is no longer running (the server may have restarted); send a new message to start over")), nil)
			return
		}
		if !yield(a2ago.NewStatusUpdateEvent(ec, a2ago.TaskStateWorking, nil), nil) {
			return
		}
		s.pump(ctx, ec, tr, yield)
	}
}

// Cancel stops the task's run.
func (e *executor) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2ago.Event, error] {
	return func(yield func(a2ago.Event, error) bool) {
		if tr := e.s.lookupRun(ec.TaskID); tr != nil {
			tr.mu.Lock()
			tr.cancelled = true
			tr.mu.Unlock()
			tr.cancel()
		}
		yield(a2ago.NewStatusUpdateEvent(ec, a2ago.TaskStateCanceled, agentText(ec, "cancelled at the client's request")), nil)
	}
}

// runItemBuffer is how far a run may get ahead of the execution pumping
// it (then the run waits). A runItem is 256 bytes: a deeper buffer per task
// was the largest allocation of a request.
const runItemBuffer = 16

// startRun starts the agent on text in the task's context session.
func (s *Server) startRun(ctx context.Context, ec *a2asrv.ExecutorContext, text string) *taskRun {
	rctx, cancel := context.WithCancel(telemetry.Carry(s.ctx, ctx)) // the run continues the request's trace
	if ec.Tenant != "" {
		// The run's A2A calls to other peers carry the tenant on (a2a-go's
		// clients read it from the context when the card names none).
		rctx = a2ago.AttachTenant(rctx, ec.Tenant)
	}
	tr := &taskRun{id: ec.TaskID, artifact: a2ago.NewArtifactID(), cancel: cancel, out: make(chan runItem, runItemBuffer), done: make(chan struct{}),
		s: s}
	tr.ctx = rctx
	if s.cfg.AskClient {
		tr.ctx = agent.WithElicitor(rctx, tr.clientElicitor())
	}
	s.mu.Lock()
	s.runs[ec.TaskID] = tr
	s.mu.Unlock()
	stream, release := s.stream(tr.ctx, ec.ContextID, text)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(tr.done)
		defer func() {
			release()
			cancel()
			s.mu.Lock()
			delete(s.runs, tr.id)
			s.mu.Unlock()
		}()
		for ev, err := range stream {
			select {
			case tr.out <- runItem{ev: ev, err: err}:
			case <-tr.ctx.Done():
				return
			}
		}
	}()
	return tr
}

// answer hands the client's reply to the pending question.
func (tr *taskRun) answer(a agent.ElicitationResult) bool {
	tr.mu.Lock()
	q := tr.pending
	tr.pending = nil
	tr.mu.Unlock()
	if q == nil {
		return false
	}
	if q.e.Kind == agent.ElicitAuth {
		// The execution that said auth-required is still pumping: tell it
		// the task works again, before the run can say anything else.
		select {
		case tr.out <- runItem{resumed: true}:
		default:
		}
	}
	q.reply <- a
	return true
}

// pump translates the run's items into task events until the task ends or
// asks for input.
func (s *Server) pump(ctx context.Context, ec *a2asrv.ExecutorContext, tr *taskRun, yield func(a2ago.Event, error) bool) {
	final := false
	ch := &chunker{ec: ec, id: tr.artifact, min: s.cfg.ChunkBytes}
	for {
		var it runItem
		ok := true
		select {
		case it = <-tr.out:
		case <-tr.done:
			select {
			case it = <-tr.out: // drain what the run said last
			default:
				ok = false
			}
		case <-ctx.Done():
			tr.cancel()
			return
		}
		if !ok {
			if !final {
				tr.mu.Lock()
				c := tr.cancelled
				tr.mu.Unlock()
				if !c {
					yield(a2ago.NewStatusUpdateEvent(ec, a2ago.TaskStateCanceled, agentText(ec, "the run was stopped")), nil)
				}
			}
			return
		}
		if it.resumed {
			if !yield(a2ago.NewStatusUpdateEvent(ec, a2ago.TaskStateWorking, agentText(ec, "credentials received")), nil) {
				tr.cancel()
				return
			}
			continue
		}
		if it.q != nil {
			tr.mu.Lock()
			tr.pending = it.q
			tr.mu.Unlock()
			state := a2ago.TaskStateInputRequired
			if it.q.e.Kind == agent.ElicitAuth {
				state = a2ago.TaskStateAuthRequired
			}
			msg := agentText(ec, it.q.e.Message)
			meta := map[string]any{"kind": string(it.q.e.Kind)}
			if len(it.q.e.Schema) > 0 {
				var sch any
				if json.Unmarshal(it.q.e.Schema, &sch) == nil {
					meta["schema"] = sch
				}
			}
			if it.q.e.Tool != "" {
				meta["tool"] = it.q.e.Tool
			}
			msg.SetMeta("switchboard/elicitation", meta)
			if !yield(a2ago.NewStatusUpdateEvent(ec, state, msg), nil) {
				return
			}
			if state == a2ago.TaskStateInputRequired {
				return // the execution ends; the client's reply starts the next one
			}
			// auth-required keeps the execution (and the client's stream)
			// open; the answer arrives through answerHandler or Answer.
			continue
		}
		if it.err != nil {
			fe := failure.From(it.err)
			tr.mu.Lock()
			c := tr.cancelled
			tr.mu.Unlock()
			if c {
				return // Cancel already reported it
			}
			state := a2ago.TaskStateFailed
			if fe.Kind == failure.Canceled {
				state = a2ago.TaskStateCanceled
			}
			if !yield(a2ago.NewStatusUpdateEvent(ec, state, agentText(ec, fe.ModelText())), nil) {
				return
			}
			final = true
			continue
		}
		ev := it.ev
		switch ev.Type {
		case agent.EventToolStarted:
			if ev.Call == nil {
				continue
			}
			m := agentText(ec, "calling "+ev.Call.Tool)
			m.SetMeta("switchboard/event", map[string]any{"type": string(ev.Type), "tool": ev.Call.Tool, "run": ev.Run})
			if !yield(a2ago.NewStatusUpdateEvent(ec, a2ago.TaskStateWorking, m), nil) {
				tr.cancel()
				return
			}
		case agent.EventToolProgress:
			if ev.Call == nil || ev.Progress == nil {
				continue
			}
			text := ev.Call.Tool + ": " + ev.Progress.Message
			m := agentText(ec, strings.TrimSuffix(text, ": "))
			m.SetMeta("switchboard/event", map[string]any{"type": string(ev.Type), "tool": ev.Call.Tool,
				"progress": ev.Progress.Progress, "total": ev.Progress.Total})
			if !yield(a2ago.NewStatusUpdateEvent(ec, a2ago.TaskStateWorking, m), nil) {
				tr.cancel()
				return
			}
		case agent.EventTurnStarted:
			ch.turn()
		case agent.EventModelText:
			if art := ch.text(ev.Text); art != nil && !yield(art, nil) {
				tr.cancel()
				return
			}
		case agent.EventFinal:
			art := ch.final(ev.Text)
			if ev.Answer != nil {
				withData(art, ev.Answer.Data)
			}
			if !yield(art, nil) {
				return
			}
			if !yield(a2ago.NewStatusUpdateEvent(ec, a2ago.TaskStateCompleted, nil), nil) {
				return
			}
			final = true
		}
	}
}

// inputText is the text the agent is asked: the message's text parts, and
// its JSON data parts as JSON. Files and other media are refused with the
// protocol's ContentTypeNotSupportedError.
func inputText(m *a2ago.Message) (string, error) {
	if m == nil || len(m.Parts) == 0 {
		return "", fmt.Errorf("the message has no parts: %w", a2ago.ErrInvalidParams)
	}
	var b strings.Builder
	for _, p := range m.Parts {
		if p == nil {
			return "", fmt.Errorf("the message has an empty part: %w", a2ago.ErrInvalidParams)
		}
		mt := strings.ToLower(strings.TrimSpace(strings.SplitN(p.MediaType, ";", 2)[0]))
		switch c := p.Content.(type) {
		case a2ago.Text:
			if mt != "" && !strings.HasPrefix(mt, "text/") {
				return "", fmt.Errorf("media type %q is not accepted: %w", p.MediaType, a2ago.ErrUnsupportedContentType)
			}
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(string(c))
		case a2ago.Data:
			if mt != "" && mt != "application/json" {
				return "", fmt.Errorf("media type %q is not accepted: %w", p.MediaType, a2ago.ErrUnsupportedContentType)
			}
			j, err := json.Marshal(c.Value)
			if err != nil {
				return "", fmt.Errorf("a data part does not encode: %w", a2ago.ErrInvalidParams)
			}
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.Write(j)
		default:
			return "", fmt.Errorf("file parts are not accepted (text and JSON data only): %w", a2ago.ErrUnsupportedContentType)
		}
	}
	if strings.TrimSpace(b.String()) == "" {
		return "", fmt.Errorf("the message has no text: %w", a2ago.ErrInvalidParams)
	}
	return b.String(), nil
}

// parseAnswer reads a client's reply to input-required: a data part is the
// answer's content (its "action" field, if "decline" or "cancel", refuses
// the question); text is {"text": ...}.
func parseAnswer(m *a2ago.Message) (agent.ElicitationResult, error) {
	if m == nil {
		return agent.ElicitationResult{}, fmt.Errorf("no message: %w", a2ago.ErrInvalidParams)
	}
	res := agent.ElicitationResult{Action: agent.ElicitAccept, Content: map[string]any{}}
	var text strings.Builder
	for _, p := range m.Parts {
		if p == nil {
			continue
		}
		switch c := p.Content.(type) {
		case a2ago.Text:
			text.WriteString(string(c))
		case a2ago.Data:
			obj, ok := c.Value.(map[string]any)
			if !ok {
				res.Content["data"] = c.Value
				continue
			}
			for k, v := range obj {
				if k == "action" {
					if a, ok := v.(string); ok && (a == string(agent.ElicitDecline) || a == string(agent.ElicitCancel)) {
						res.Action = agent.ElicitAction(a)
					}
					continue
				}
				res.Content[k] = v
			}
		default:
			return agent.ElicitationResult{}, fmt.Errorf("answers are text or JSON data: %w", a2ago.ErrUnsupportedContentType)
		}
	}
	if text.Len() > 0 {
		res.Content["text"] = text.String()
	}
	if res.Action != agent.ElicitAccept {
		res.Content = nil
	}
	return res, nil
}
