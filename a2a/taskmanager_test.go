package a2a

import (
	"context"
	"iter"
	"testing"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/switchboard-dev/switchboard/a2a/internal/taskstore"
	"github.com/switchboard-dev/switchboard/internal/testkit"
)

// gatedExec creates its task, then waits for gate before working on until
// it is told to stop (its context ends or an event is refused).
type gatedExec struct {
	gate    chan struct{}
	stopped chan struct{}
	quit    chan struct{} // closed when the test ends
}

func (g *gatedExec) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2ago.Event, error] {
	return func(yield func(a2ago.Event, error) bool) {
		defer close(g.stopped)
		if !yield(a2ago.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		<-g.gate
		for {
			if !yield(a2ago.NewStatusUpdateEvent(ec, a2ago.TaskStateWorking, nil), nil) {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-g.quit:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
}

func (g *gatedExec) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2ago.Event, error] {
	return func(yield func(a2ago.Event, error) bool) {
		yield(a2ago.NewStatusUpdateEvent(ec, a2ago.TaskStateCanceled, nil), nil)
	}
}

func newTestTaskHandler(t *testing.T, ex a2asrv.AgentExecutor) *taskHandler {
	srv, err := NewServer(context.Background(), ServerConfig{Agent: echoAgent(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return &taskHandler{ex: ex, store: taskstore.NewMemory(taskstore.MemoryConfig{}), s: srv, live: map[a2ago.TaskID]*execution{}}
}

// TestCancelBeforeTheRunStarts: a task cancelled between its creation and
// the executor's next event ends cancelled, the cancel call returns, and
// the executor is stopped by the refusal of its next event.
func TestCancelBeforeTheRunStarts(t *testing.T) {
	g := &gatedExec{gate: make(chan struct{}), stopped: make(chan struct{}), quit: make(chan struct{})}
	h := newTestTaskHandler(t, g)
	t.Cleanup(func() { close(g.quit) }) // before the server's Close waits for it
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := h.SendMessage(ctx, &a2ago.SendMessageRequest{Message: a2ago.NewMessage(a2ago.MessageRoleUser, a2ago.NewTextPart("hi")),
		Config: &a2ago.SendMessageConfig{ReturnImmediately: true}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.(*a2ago.Task).ID
	done := make(chan *a2ago.Task, 1)
	cctx, ccancel := context.WithTimeout(ctx, 2*time.Second)
	defer ccancel()
	go func() {
		task, err := h.CancelTask(cctx, &a2ago.CancelTaskRequest{ID: id})
		if err != nil {
			t.Errorf("cancel: %v", err)
		}
		done <- task
	}()
	// The cancellation's event is processed first (the execution is
	// final), then the executor's next event comes and is refused.
	testkit.WaitFor(t, 5*time.Second, "the cancellation to be processed", func() bool {
		h.mu.Lock()
		ex := h.live[id]
		h.mu.Unlock()
		if ex == nil {
			return false
		}
		ex.mu.Lock()
		defer ex.mu.Unlock()
		return ex.final
	})
	close(g.gate)
	select {
	case task := <-done:
		if task == nil || task.Status.State != a2ago.TaskStateCanceled {
			t.Fatalf("cancel = %+v", task)
		}
	case <-ctx.Done():
		t.Fatal("CancelTask did not return")
	}
	select {
	case <-g.stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("the executor went on after its task ended")
	}
	st, err := h.store.Get(ctx, id)
	if err != nil || st.Task.Status.State != a2ago.TaskStateCanceled {
		t.Fatalf("stored = %+v, %v", st, err)
	}
}

// TestServerUsesOurTaskManager: a2a-go's NewHandler still returns its
// InterceptedHandler, so the server's operations run through taskHandler
// (if an a2a-go upgrade changes that, the server would silently fall back
// to a2a-go's gob-copying manager and lose the set-time push check).
func TestServerUsesOurTaskManager(t *testing.T) {
	srv, err := NewServer(context.Background(), ServerConfig{Agent: echoAgent(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ah, ok := srv.handler.(*answerHandler)
	if !ok {
		t.Fatalf("handler is %T", srv.handler)
	}
	ih, ok := ah.RequestHandler.(*a2asrv.InterceptedHandler)
	if !ok {
		t.Fatalf("inner handler is %T", ah.RequestHandler)
	}
	if _, ok := ih.Handler.(*taskHandler); !ok {
		t.Fatalf("operations are served by %T, not the task manager", ih.Handler)
	}
}
