package main

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"go.uber.org/goleak"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/failure"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"))
}

func start(t *testing.T, answer func(string) string) *Pipeline {
	t.Helper()
	p, err := Start(context.Background(), Options{Answer: answer})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestProgressReachesPlanner: the researcher's tool progress reaches the
// planner's events and the planner's bus; the remote task's updates are on
// the bus too.
func TestProgressReachesPlanner(t *testing.T) {
	p := start(t, nil)
	ctx := ctxT(t)
	var run, final string
	var progress []string
	for ev, err := range p.Planner.Stream(ctx, "delegate research nats") {
		if err != nil {
			t.Fatal(err)
		}
		run = ev.Run
		if ev.Type == agent.EventToolProgress {
			progress = append(progress, ev.Progress.Message)
		}
		if ev.Type == agent.EventFinal {
			final = ev.Text
		}
	}
	if !strings.Contains(final, "three facts about nats") {
		t.Fatalf("final = %q", final)
	}
	joined := strings.Join(progress, "\n")
	for _, want := range []string{"research: reading sources on nats", "research: writing notes", "artifact answer"} {
		if !strings.Contains(joined, want) {
			t.Errorf("planner progress lacks %q:\n%s", want, joined)
		}
	}
	busProgress := 0
	for ev, err := range p.Bus.Replay(ctx, run) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == agent.EventToolProgress && strings.Contains(ev.Progress.Message, "reading sources on nats") {
			busProgress++
		}
	}
	if busProgress == 0 {
		t.Error("the researcher's progress is not on the planner's bus")
	}
	c, _ := p.Peers.Client("researcher")
	l, err := c.ListTasks(ctx, &a2ago.ListTasksRequest{})
	if err != nil || len(l.Tasks) != 1 {
		t.Fatalf("researcher tasks: %v %v", l, err)
	}
	states := map[string]bool{}
	for u, err := range p.Bus.SubscribeTask(ctx, string(l.Tasks[0].ID)) {
		if err != nil {
			t.Fatal(err)
		}
		states[u.State] = true
	}
	if !states["working"] || !states["completed"] {
		t.Errorf("task updates on the bus: %v", states)
	}
}

// TestInputFlowsBack: the researcher asks (input-required), the question
// reaches the planner's bus elicitation responder, and the answer
// continues the same remote task.
func TestInputFlowsBack(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	p := start(t, func(q string) string {
		mu.Lock()
		asked = append(asked, q)
		mu.Unlock()
		return "Paris"
	})
	ans, err := p.Planner.Run(ctxT(t), "delegate ask weather")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ans.Text, "weather in Paris") {
		t.Fatalf("answer = %q", ans.Text)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || asked[0] != "Which city for weather?" {
		t.Fatalf("questions = %v", asked)
	}
	c, _ := p.Peers.Client("researcher")
	l, _ := c.ListTasks(context.Background(), &a2ago.ListTasksRequest{IncludeArtifacts: true})
	if len(l.Tasks) != 1 || l.Tasks[0].Status.State != a2ago.TaskStateCompleted {
		t.Fatalf("one remote task should have completed: %+v", l.Tasks)
	}
}

// TestDeclinedQuestion: without an answer the delegation fails as Declined
// and the remote task is cancelled.
func TestDeclinedQuestion(t *testing.T) {
	p := start(t, nil) // no responder: the bus elicitation fails
	ctx := ctxT(t)
	var failures []agent.FailureInfo
	for ev, err := range p.Planner.Stream(ctx, "delegate ask weather") {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == agent.EventFailure {
			failures = append(failures, *ev.Failure)
		}
	}
	if len(failures) == 0 || failures[0].Kind != failure.Declined {
		t.Fatalf("failures = %+v", failures)
	}
	c, _ := p.Peers.Client("researcher")
	l, _ := c.ListTasks(ctx, &a2ago.ListTasksRequest{})
	if len(l.Tasks) != 1 || l.Tasks[0].Status.State != a2ago.TaskStateCanceled {
		t.Fatalf("the remote task should be cancelled: %+v", l.Tasks[0].Status)
	}
}

// TestCancelPlannerCancelsResearcher: cancelling the planner's run cancels
// the researcher's task (CancelTask).
func TestCancelPlannerCancelsResearcher(t *testing.T) {
	p := start(t, nil)
	ctx, cancel := context.WithCancel(ctxT(t))
	for ev, err := range p.Planner.Stream(ctx, "delegate slow work") {
		if err != nil {
			break
		}
		if ev.Type == agent.EventToolProgress && strings.Contains(ev.Progress.Message, "started on work") {
			cancel()
		}
	}
	cancel()
	c, _ := p.Peers.Client("researcher")
	deadline := time.Now().Add(15 * time.Second)
	for {
		l, err := c.ListTasks(context.Background(), &a2ago.ListTasksRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Tasks) == 1 && l.Tasks[0].Status.State == a2ago.TaskStateCanceled {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the researcher's task was not cancelled: %+v", l.Tasks)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
