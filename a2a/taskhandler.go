package a2a

import (
	"context"
	"fmt"
	"iter"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"

	"github.com/switchboard-dev/switchboard/failure"
)

// notify sends ev to the task's push configs; a failed delivery is logged
// by the sender and does not fail the task.
func (h *taskHandler) notify(ctx context.Context, id a2ago.TaskID, ev a2ago.Event) {
	if h.pushes == nil {
		return
	}
	configs, err := h.pushes.List(ctx, id)
	if err != nil {
		h.s.log.Warn().Err(err).Str("task", string(id)).Msg("a2a: push configs unavailable")
		return
	}
	for _, c := range configs {
		if err := h.sender.SendPush(ctx, c, ev); err != nil {
			h.s.log.Warn().Err(err).Str("task", string(id)).Msg("a2a: push notification failed")
		}
	}
}

// SendMessage runs the task until it ends, needs input or auth, or (with
// ReturnImmediately) exists.
func (h *taskHandler) SendMessage(ctx context.Context, req *a2ago.SendMessageRequest) (a2ago.SendMessageResult, error) {
	ex, sub, err := h.start(ctx, req)
	if err != nil {
		return nil, err
	}
	defer sub.leave()
	immediate := req.Config != nil && req.Config.ReturnImmediately
	for {
		select {
		case ev, ok := <-sub.ch:
			if !ok {
				return ex.outcome()
			}
			if _, isMsg := ev.(*a2ago.Message); isMsg {
				continue
			}
			if immediate || authRequired(ev) {
				return ex.snapshot(), nil
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func authRequired(ev a2ago.Event) bool {
	st, _ := eventState(ev)
	return st == a2ago.TaskStateAuthRequired
}

// SendStreamingMessage streams the task's events until its execution ends.
func (h *taskHandler) SendStreamingMessage(ctx context.Context, req *a2ago.SendMessageRequest) iter.Seq2[a2ago.Event, error] {
	return func(yield func(a2ago.Event, error) bool) {
		ex, sub, err := h.start(ctx, req)
		if err != nil {
			yield(nil, err)
			return
		}
		defer sub.leave()
		h.follow(ctx, ex, sub, yield)
	}
}

// follow yields sub's events until the execution ends; an execution that
// failed before its task existed yields its error.
func (h *taskHandler) follow(ctx context.Context, ex *execution, sub *subscriber, yield func(a2ago.Event, error) bool) {
	n := 0
	for {
		select {
		case ev, ok := <-sub.ch:
			if !ok {
				if n == 0 {
					if _, err := ex.outcome(); err != nil {
						yield(nil, err)
					}
				}
				return
			}
			n++
			if !yield(ev, nil) {
				return
			}
		case <-ctx.Done():
			yield(nil, ctx.Err())
			return
		}
	}
}

// SubscribeToTask streams a running task: its snapshot, then its events.
func (h *taskHandler) SubscribeToTask(ctx context.Context, req *a2ago.SubscribeToTaskRequest) iter.Seq2[a2ago.Event, error] {
	return func(yield func(a2ago.Event, error) bool) {
		if req == nil || req.ID == "" {
			yield(nil, a2ago.ErrInvalidParams)
			return
		}
		st, err := h.store.Get(ctx, req.ID) // the caller must own it
		if err != nil {
			yield(nil, fmt.Errorf("%w: %w", a2ago.ErrTaskNotFound, err))
			return
		}
		h.mu.Lock()
		ex := h.live[req.ID]
		h.mu.Unlock()
		if ex == nil || st.Task.Status.State.Terminal() {
			yield(nil, fmt.Errorf("%w: the task has no active execution", a2ago.ErrTaskNotFound))
			return
		}
		ex.mu.Lock()
		if ex.final || ex.task == nil {
			ex.mu.Unlock()
			yield(nil, fmt.Errorf("%w: the task has no active execution", a2ago.ErrTaskNotFound))
			return
		}
		snap := ex.task
		sub := ex.subscribe()
		ex.mu.Unlock()
		defer sub.leave()
		if !yield(snap, nil) {
			return
		}
		h.follow(ctx, ex, sub, yield)
	}
}

// CancelTask cancels the task through the executor: inside its running
// execution if there is one, else in an execution of its own.
func (h *taskHandler) CancelTask(ctx context.Context, req *a2ago.CancelTaskRequest) (*a2ago.Task, error) {
	if req == nil || req.ID == "" {
		return nil, a2ago.ErrInvalidParams
	}
	for {
		st, err := h.store.Get(ctx, req.ID)
		if err != nil {
			return nil, fmt.Errorf("failed to cancel: %w", err)
		}
		t := st.Task
		switch {
		case t.Status.State == a2ago.TaskStateCanceled:
			return t, nil
		case t.Status.State.Terminal():
			return nil, fmt.Errorf("task in non-cancelable state %s: %w", t.Status.State, a2ago.ErrTaskNotCancelable)
		}
		ec := &a2asrv.ExecutorContext{TaskID: t.ID, ContextID: t.ContextID, StoredTask: t, Metadata: req.Metadata}
		if cc, ok := a2asrv.CallContextFrom(ctx); ok {
			ec.User, ec.ServiceParams, ec.Tenant = cc.User, cc.ServiceParams(), cc.Tenant()
		}
		ex, again := h.cancelIn(context.WithoutCancel(ctx), ec, st)
		select {
		case <-ex.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if again {
			continue // the execution was ending: look again
		}
		res, err := ex.outcome()
		if err != nil {
			return nil, fmt.Errorf("failed to cancel: %w", err)
		}
		if task, ok := res.(*a2ago.Task); ok {
			return task, nil
		}
		return nil, fmt.Errorf("cancellation produced no task: %w", a2ago.ErrInternalError)
	}
}

// cancelIn runs the executor's Cancel in the task's running execution, or
// in a new one; again reports an execution that was already ending, to be
// waited for before trying again.
func (h *taskHandler) cancelIn(ctx context.Context, ec *a2asrv.ExecutorContext, st *taskstore.StoredTask) (ex *execution, again bool) {
	cancel := func(ctx context.Context, _ *a2asrv.ExecutorContext) iter.Seq2[a2ago.Event, error] {
		return h.ex.Cancel(ctx, ec)
	}
	h.mu.Lock()
	ex = h.live[ec.TaskID]
	if ex == nil {
		ex = &execution{h: h, ec: ec, done: make(chan struct{}), task: st.Task, version: st.Version}
		h.live[ec.TaskID] = ex
		h.mu.Unlock()
		h.s.wg.Add(1)
		go func() {
			defer h.s.wg.Done()
			ex.drive(ctx, cancel)
			ex.close()
		}()
		return ex, false
	}
	h.mu.Unlock()
	ex.cmu.Lock()
	defer ex.cmu.Unlock()
	ex.mu.Lock()
	ending := ex.final
	ex.mu.Unlock()
	if ex.closing || ending {
		return ex, true
	}
	// The running execution's own events and the cancellation's are
	// processed one at a time, in order.
	ex.drive(ctx, cancel)
	return ex, false
}

// CreateTaskPushConfig refuses webhooks the push guard forbids before
// a2a-go's handler stores them.
func (h *taskHandler) CreateTaskPushConfig(ctx context.Context, req *a2ago.PushConfig) (*a2ago.PushConfig, error) {
	if h.pushes != nil && req != nil {
		if err := h.guard.check(ctx, req.URL); err != nil {
			return nil, err
		}
		if err := h.pushRoom(ctx, req.TaskID, req.ID); err != nil {
			return nil, err
		}
	}
	return h.RequestHandler.CreateTaskPushConfig(ctx, req)
}

// maxPushConfigs bounds a task's push configs: every event of the task is
// delivered to each, one after another.
const maxPushConfigs = 10

// pushRoom refuses a new push config (one whose id the task does not
// have yet) past maxPushConfigs.
func (h *taskHandler) pushRoom(ctx context.Context, task a2ago.TaskID, id string) error {
	have, err := h.pushes.List(ctx, task)
	if err != nil || len(have) < maxPushConfigs {
		return nil // a store failure is the store's to report on saving
	}
	for _, c := range have {
		if id != "" && c.ID == id {
			return nil // a replacement
		}
	}
	return &failure.Error{Kind: failure.InvalidArgs, Source: failure.SourceA2A, Op: "set push config", Err: a2ago.ErrInvalidParams,
		Message: fmt.Sprintf("task %s has %d push configs, the most a task may have: delete one first", task, len(have))}
}

// savePush stores a push config sent with a message.
func (h *taskHandler) savePush(ctx context.Context, id a2ago.TaskID, pc *a2ago.PushConfig) error {
	if h.pushes == nil {
		return a2ago.ErrPushNotificationNotSupported
	}
	if err := h.guard.check(ctx, pc.URL); err != nil {
		return err
	}
	if err := h.pushRoom(ctx, id, pc.ID); err != nil {
		return err
	}
	if _, err := h.pushes.Save(ctx, id, pc); err != nil {
		return fmt.Errorf("failed to save push config: %w", err)
	}
	return nil
}
