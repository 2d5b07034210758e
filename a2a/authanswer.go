package a2a

import (
	"context"
	"iter"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/switchboard-dev/switchboard/agent"
)

// answerHandler lets a client answer auth-required in band. a2a-go keeps
// an execution running through auth-required (the stream stays open, as
// the spec recommends) and refuses any message to a task whose execution
// is in progress; this wrapper hands such a message to the run's pending
// question instead, then follows the task like SubscribeToTask.
type answerHandler struct {
	a2asrv.RequestHandler
	s *Server
}

// pendingAuth returns the run of a task waiting for an auth answer.
func (h *answerHandler) pendingAuth(req *a2ago.SendMessageRequest) *taskRun {
	if req == nil || req.Message == nil || req.Message.TaskID == "" {
		return nil
	}
	tr := h.s.lookupRun(req.Message.TaskID)
	if tr == nil {
		return nil
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.pending == nil || tr.pending.e.Kind != agent.ElicitAuth {
		return nil
	}
	return tr
}

// deliver checks that the caller may see the task, and answers.
func (h *answerHandler) deliver(ctx context.Context, tr *taskRun, req *a2ago.SendMessageRequest) error {
	if _, err := h.RequestHandler.GetTask(ctx, &a2ago.GetTaskRequest{ID: tr.id}); err != nil {
		return err
	}
	ans, err := parseAnswer(req.Message)
	if err != nil {
		return err
	}
	if !tr.answer(ans) {
		return a2ago.ErrTaskNotFound
	}
	return nil
}

func (h *answerHandler) SendMessage(ctx context.Context, req *a2ago.SendMessageRequest) (a2ago.SendMessageResult, error) {
	tr := h.pendingAuth(req)
	if tr == nil {
		return h.RequestHandler.SendMessage(ctx, req)
	}
	if err := h.deliver(ctx, tr, req); err != nil {
		return nil, err
	}
	for ev, err := range h.RequestHandler.SubscribeToTask(ctx, &a2ago.SubscribeToTaskRequest{ID: tr.id, Tenant: req.Tenant}) {
		if err != nil {
			break // the task ended between the answer and the subscription
		}
		if interrupted(resumedSnapshot(ev)) {
			break
		}
	}
	return h.RequestHandler.GetTask(ctx, &a2ago.GetTaskRequest{ID: tr.id, Tenant: req.Tenant})
}

func (h *answerHandler) SendStreamingMessage(ctx context.Context, req *a2ago.SendMessageRequest) iter.Seq2[a2ago.Event, error] {
	tr := h.pendingAuth(req)
	if tr == nil {
		return h.RequestHandler.SendStreamingMessage(ctx, req)
	}
	return func(yield func(a2ago.Event, error) bool) {
		if err := h.deliver(ctx, tr, req); err != nil {
			yield(nil, err)
			return
		}
		for ev, err := range h.RequestHandler.SubscribeToTask(ctx, &a2ago.SubscribeToTaskRequest{ID: tr.id, Tenant: req.Tenant}) {
			if err != nil {
				// Ended meanwhile: the stored task is the answer.
				t, gerr := h.RequestHandler.GetTask(ctx, &a2ago.GetTaskRequest{ID: tr.id, Tenant: req.Tenant})
				if gerr != nil {
					yield(nil, err)
					return
				}
				yield(t, nil)
				return
			}
			ev = resumedSnapshot(ev)
			if !yield(ev, nil) || interrupted(ev) {
				return
			}
		}
	}
}

// interrupted reports an event after which a client acts: a terminal
// state, or input or auth required.
func interrupted(ev a2ago.Event) bool {
	if _, ok := ev.(*a2ago.Message); ok {
		return true
	}
	st, ok := eventState(ev)
	return ok && (st.Terminal() || st == a2ago.TaskStateInputRequired || st == a2ago.TaskStateAuthRequired)
}

// resumedSnapshot shows a task snapshot taken just after the answer was
// delivered as working: the stored state may still say auth-required.
func resumedSnapshot(ev a2ago.Event) a2ago.Event {
	t, ok := ev.(*a2ago.Task)
	if !ok || t.Status.State != a2ago.TaskStateAuthRequired {
		return ev
	}
	c := *t
	c.Status = a2ago.TaskStatus{State: a2ago.TaskStateWorking, Timestamp: t.Status.Timestamp}
	return &c
}

// Answer answers, out of band, the question a task's run is waiting on
// (input-required or auth-required): for example from an OAuth callback
// handler that received the credentials the agent asked for. It reports
// false when no run of this process waits on that task.
func (s *Server) Answer(taskID string, res agent.ElicitationResult) bool {
	tr := s.lookupRun(a2ago.TaskID(taskID))
	if tr == nil {
		return false
	}
	return tr.answer(res)
}
