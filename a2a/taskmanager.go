package a2a

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/push"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"

	"github.com/switchboard-dev/switchboard/failure"
)

// taskHandler serves the operations that run the executor (send, stream,
// cancel, subscribe) with its own task manager: each event is folded into
// the task by copying only what it changes (a2a-go's manager deep-copies
// the whole task through encoding/gob several times per event, most of its
// server's CPU). Reads, push-config operations and the extended card go to
// a2a-go's default handler over the same stores. It sits inside a2a-go's
// InterceptedHandler, so interceptors, logging and the wire codecs are
// a2a-go's.
type taskHandler struct {
	a2asrv.RequestHandler // a2a-go's default handler, for the other operations

	ex     a2asrv.AgentExecutor
	store  taskstore.Store
	pushes push.ConfigStore // nil: push notifications off
	sender push.Sender
	guard  pushGuard
	s      *Server

	mu   sync.Mutex
	live map[a2ago.TaskID]*execution
}

// execution is one run of the executor (or of its Cancel) for a task:
// it folds the events in order, stores them, and fans them out.
type execution struct {
	h    *taskHandler
	ec   *a2asrv.ExecutorContext
	done chan struct{} // closed when the execution has ended
	// release gives back the task slot of an execution a message started
	// (nil for other executions).
	release func()

	pmu sync.Mutex // held while an event is processed: one at a time, in order
	cmu sync.Mutex // held while a cancellation's events are processed
	// closing (under cmu): the executor call has returned; a cancellation
	// must wait for the end and start afresh.
	closing bool

	mu      sync.Mutex
	task    *a2ago.Task // the latest snapshot; never changed once published
	version taskstore.TaskVersion
	subs    []*subscriber
	result  a2ago.SendMessageResult
	err     error
	final   bool // a final event was processed: the execution is ending
}

// subscriber receives an execution's events; ch is closed when the
// execution ends.
type subscriber struct {
	ch   chan a2ago.Event
	gone chan struct{} // closed when the subscriber stops reading
	once sync.Once
}

func (sub *subscriber) leave() { sub.once.Do(func() { close(sub.gone) }) }

// subscriberBuffer events are queued per subscriber; then the execution
// waits for the subscriber (or for it to leave).
const subscriberBuffer = 32

var errInProgress = errors.New("the task is already being worked on")

func validateSend(req *a2ago.SendMessageRequest) error {
	switch {
	case req == nil:
		return fmt.Errorf("message send params is required: %w", a2ago.ErrInvalidParams)
	case req.Message == nil:
		return fmt.Errorf("message is required: %w", a2ago.ErrInvalidParams)
	case req.Message.ID == "":
		return fmt.Errorf("message ID is required: %w", a2ago.ErrInvalidParams)
	case len(req.Message.Parts) == 0:
		return fmt.Errorf("message parts is required: %w", a2ago.ErrInvalidParams)
	case req.Message.Role == "":
		return fmt.Errorf("message role is required: %w", a2ago.ErrInvalidParams)
	}
	return nil
}

// start validates req, prepares the task and starts its execution with sub
// subscribed from the first event.
func (h *taskHandler) start(ctx context.Context, req *a2ago.SendMessageRequest) (*execution, *subscriber, error) {
	if err := validateSend(req); err != nil {
		return nil, nil, err
	}
	release, err := h.s.slots.acquire(slotOwner(ctx))
	if err != nil {
		return nil, nil, err
	}
	started := false
	defer func() {
		if !started {
			release()
		}
	}()
	msg := req.Message
	ec := &a2asrv.ExecutorContext{Message: msg, Metadata: req.Metadata, Tenant: req.Tenant}
	if cc, ok := a2asrv.CallContextFrom(ctx); ok {
		ec.User, ec.ServiceParams, ec.Tenant = cc.User, cc.ServiceParams(), cc.Tenant()
	}
	ex := &execution{h: h, ec: ec, done: make(chan struct{}), release: release}
	if msg.TaskID == "" {
		ec.TaskID, ec.ContextID = a2ago.NewTaskID(), msg.ContextID
		if ec.ContextID == "" {
			ec.ContextID = a2ago.NewContextID()
		}
		h.mu.Lock()
		h.live[ec.TaskID] = ex
		h.mu.Unlock()
	} else {
		if err := h.claim(ctx, msg.TaskID, ex); err != nil {
			return nil, nil, err
		}
		if err := ex.load(ctx, msg); err != nil {
			h.release(ex)
			return nil, nil, err
		}
	}
	if req.Config != nil && req.Config.PushConfig != nil {
		if err := h.savePush(ctx, ec.TaskID, req.Config.PushConfig); err != nil {
			h.release(ex)
			return nil, nil, err
		}
	}
	sub := ex.subscribe()
	h.s.wg.Add(1)
	started = true
	go ex.run(context.WithoutCancel(ctx))
	return ex, sub, nil
}

// claim registers ex as the task's execution, after the previous one if it
// is ending.
func (h *taskHandler) claim(ctx context.Context, id a2ago.TaskID, ex *execution) error {
	for {
		h.mu.Lock()
		prev := h.live[id]
		if prev == nil {
			h.live[id] = ex
			h.mu.Unlock()
			return nil
		}
		h.mu.Unlock()
		prev.mu.Lock()
		ending := prev.final
		prev.mu.Unlock()
		if !ending {
			return fmt.Errorf("%w: %w", errInProgress, a2ago.ErrInvalidParams)
		}
		select {
		case <-prev.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (h *taskHandler) release(ex *execution) {
	h.mu.Lock()
	if h.live[ex.ec.TaskID] == ex {
		delete(h.live, ex.ec.TaskID)
	}
	h.mu.Unlock()
}

// load continues a stored task with msg: checked, and msg added to its
// history.
func (ex *execution) load(ctx context.Context, msg *a2ago.Message) error {
	st, err := ex.h.store.Get(ctx, msg.TaskID)
	if err != nil {
		return fmt.Errorf("task loading failed: %w", err)
	}
	t := st.Task
	if msg.ContextID != "" && msg.ContextID != t.ContextID {
		return fmt.Errorf("message contextID different from task contextID: %w", a2ago.ErrInvalidParams)
	}
	if t.Status.State.Terminal() {
		return fmt.Errorf("task in a terminal state %q: %w", t.Status.State, a2ago.ErrInvalidParams)
	}
	version := st.Version
	if !slices.ContainsFunc(t.History, func(m *a2ago.Message) bool { return m != nil && m.ID == msg.ID }) {
		c := *t
		c.History = append(slices.Clip(t.History), msg)
		t = &c
		if version, err = ex.h.store.Update(ctx, &taskstore.UpdateRequest{Task: t, Event: msg, PrevVersion: version}); err != nil {
			return fmt.Errorf("task message history update failed: %w", err)
		}
	}
	ex.task, ex.version = t, version
	ex.ec.TaskID, ex.ec.ContextID, ex.ec.StoredTask = t.ID, t.ContextID, t
	return nil
}

// subscribe adds a subscriber; the snapshot is the task as it is now, and
// the subscriber gets every event after it.
func (ex *execution) subscribe() *subscriber {
	sub := &subscriber{ch: make(chan a2ago.Event, subscriberBuffer), gone: make(chan struct{})}
	ex.subs = append(ex.subs, sub)
	return sub
}

// run executes the agent and processes its events.
func (ex *execution) run(ctx context.Context) {
	defer ex.h.s.wg.Done()
	ex.drive(ctx, ex.h.ex.Execute)
	ex.close()
}

// close marks the executor call as returned (after any cancellation being
// processed) and ends the execution.
func (ex *execution) close() {
	ex.cmu.Lock()
	ex.closing = true
	ex.cmu.Unlock()
	ex.finish()
}

// drive runs one executor call (Execute or Cancel) and processes its
// events; an error ends the task as failed once it exists.
func (ex *execution) drive(ctx context.Context, call func(context.Context, *a2asrv.ExecutorContext) iter.Seq2[a2ago.Event, error]) {
	defer func() {
		if r := recover(); r != nil {
			ex.h.s.pol().Handle(ex.h.s.ctx, &failure.Error{Kind: failure.Panic, Source: failure.SourceA2A, Op: "execute",
				Err: &failure.PanicError{Value: r}})
			ex.fail(ctx, fmt.Errorf("the agent panicked: %w", a2ago.ErrInternalError))
		}
	}()
	for ev, err := range call(ctx, ex.ec) {
		if err != nil {
			ex.fail(ctx, err)
			return
		}
		if ev == nil {
			continue
		}
		if err := ex.process(ctx, ev); errors.Is(err, errEnded) {
			return // the task ended (cancelled meanwhile): stop the executor
		} else if err != nil {
			ex.fail(ctx, err)
			return
		}
	}
}

// errEnded is an event that came after the execution's final one.
var errEnded = errors.New("the execution has ended")

// fail records err: the caller's error before a task exists, else the task
// fails (without the cause, which may disclose internals).
func (ex *execution) fail(ctx context.Context, err error) {
	ex.mu.Lock()
	if ex.final {
		ex.mu.Unlock()
		return
	}
	if ex.task == nil {
		ex.err, ex.final = err, true
		ex.mu.Unlock()
		return
	}
	ex.mu.Unlock()
	ex.h.s.log.Warn().Err(err).Str("task", string(ex.ec.TaskID)).Msg("a2a: task failed")
	ev := a2ago.NewStatusUpdateEvent(ex.ec, a2ago.TaskStateFailed, nil)
	if perr := ex.process(ctx, ev); perr != nil && !errors.Is(perr, errEnded) {
		ex.mu.Lock()
		ex.err, ex.final = perr, true
		ex.mu.Unlock()
	}
}

// process folds ev into the task, stores it, sends push notifications and
// hands it to the subscribers. Events after the final one are dropped
// (errEnded).
func (ex *execution) process(ctx context.Context, ev a2ago.Event) error {
	ex.pmu.Lock()
	defer ex.pmu.Unlock()
	ex.mu.Lock()
	if ex.final {
		ex.mu.Unlock()
		return errEnded
	}
	if msg, ok := ev.(*a2ago.Message); ok {
		if ex.task != nil {
			ex.mu.Unlock()
			return fmt.Errorf("message not allowed after task was stored: %w", a2ago.ErrInvalidAgentResponse)
		}
		ex.result, ex.final = msg, true
	} else {
		if info := ev.TaskInfo(); info.TaskID != ex.ec.TaskID || info.ContextID != ex.ec.ContextID {
			ex.mu.Unlock()
			return fmt.Errorf("event for task %s/%s in task %s/%s: %w", info.TaskID, info.ContextID, ex.ec.TaskID, ex.ec.ContextID,
				a2ago.ErrInvalidAgentResponse)
		}
		next, err := fold(ex.task, ev)
		if err != nil {
			ex.mu.Unlock()
			return err
		}
		if err := ex.save(ctx, next, ev); err != nil {
			ex.mu.Unlock()
			return err
		}
		if isFinal(ev) {
			ex.result, ex.final = ex.task, true
		}
	}
	subs := slices.Clone(ex.subs)
	ex.mu.Unlock()
	ex.h.notify(ctx, ex.ec.TaskID, ev)
	for _, sub := range subs {
		select {
		case sub.ch <- ev:
		case <-sub.gone:
		case <-ex.h.s.ctx.Done():
		}
	}
	return nil
}

// save stores next; a concurrent change that ended the task wins.
func (ex *execution) save(ctx context.Context, next *a2ago.Task, ev a2ago.Event) error {
	var v taskstore.TaskVersion
	var err error
	if ex.task == nil {
		v, err = ex.h.store.Create(ctx, next)
	} else {
		v, err = ex.h.store.Update(ctx, &taskstore.UpdateRequest{Task: next, Event: ev, PrevVersion: ex.version})
	}
	if errors.Is(err, taskstore.ErrConcurrentModification) {
		st, gerr := ex.h.store.Get(ctx, ex.ec.TaskID)
		if gerr == nil && st.Task.Status.State.Terminal() {
			ex.task, ex.version, ex.result, ex.final = st.Task, st.Version, st.Task, true
			return errEnded
		}
	}
	if err != nil {
		return fmt.Errorf("failed to save task state: %w", err)
	}
	ex.task, ex.version = next, v
	return nil
}

// finish ends the execution: subscribers' streams close and the task is
// free for the next message.
func (ex *execution) finish() {
	ex.mu.Lock()
	ex.final = true
	if ex.result == nil && ex.err == nil && ex.task != nil {
		ex.result = ex.task
	}
	subs := ex.subs
	ex.subs = nil
	ex.mu.Unlock()
	ex.h.release(ex)
	if ex.release != nil {
		ex.release() // before the subscribers learn the end: a client's next task finds the slot free
	}
	for _, sub := range subs {
		close(sub.ch)
	}
	close(ex.done)
}

// outcome is the execution's result once it has ended.
func (ex *execution) outcome() (a2ago.SendMessageResult, error) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if ex.err != nil {
		return nil, ex.err
	}
	if ex.result == nil {
		return nil, fmt.Errorf("execution finished without producing any events: %w", a2ago.ErrInvalidAgentResponse)
	}
	return ex.result, nil
}

func (ex *execution) snapshot() *a2ago.Task {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	return ex.task
}
