package workflow_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/workflow"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

func TestSequential(t *testing.T) {
	seq, err := workflow.NewSequential(workflow.SequentialConfig{Common: workflow.Common{Name: "chain"},
		Steps: []workflow.Step{
			{Runner: echoAgent(t, "a")},
			{Runner: echoAgent(t, "b")},
			{Runner: echoAgent(t, "c"), Input: func(in workflow.Input) string { return in.Task + "+" + in.Previous }},
		}})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := drain(seq.Stream(context.Background(), "x"))
	if err != nil {
		t.Fatal(err)
	}
	fin := evs[len(evs)-1]
	if fin.Type != agent.EventFinal || fin.Text != "c(x+b(a(x)))" {
		t.Fatalf("final = %s %q", fin.Type, fin.Text)
	}
	if fin.Answer.Turns != 3 || fin.Answer.Run != fin.Run {
		t.Fatalf("answer = %+v", fin.Answer)
	}
	started, finished := top(evs, agent.EventStepStarted), top(evs, agent.EventStepFinished)
	if len(started) != 3 || len(finished) != 3 {
		t.Fatalf("%d started, %d finished", len(started), len(finished))
	}
	for i, f := range finished {
		if f.Step.Index != i || f.Step.Run == "" || f.Step.Attempt != 1 {
			t.Fatalf("step %d = %+v", i, f.Step)
		}
	}
	// Every nested event names the workflow's run and its step.
	for _, e := range evs {
		if e.Type != agent.EventNested {
			continue
		}
		p := e.Nested.Parent
		if p == nil || p.Run != fin.Run || p.Step != e.Nested.Agent {
			t.Fatalf("nested %s of %s: parent %+v", e.Nested.Type, e.Nested.Agent, p)
		}
	}
}

func TestSequentialStepFailure(t *testing.T) {
	transient := &failure.Error{Kind: failure.Transient, Source: failure.SourceModel, Message: "503"}
	var attempts atomic.Int32
	flaky := newAgent(t, agent.Config{Name: "flaky", Policy: failure.NewPolicy(failure.PolicyConfig{MaxAttempts: 1}),
		Model: llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
			if attempts.Add(1) < 3 {
				return llm.Step{Err: transient}
			}
			return llm.Say("ok")
		}))})
	cases := []struct {
		name     string
		step     agent.Runner
		wantKind failure.Kind
		wantRuns int // step_started events of the failing step
	}{
		{name: "transient is retried by the policy", step: flaky, wantRuns: 3},
		{name: "model failure fails the sequence", step: failingAgent(t, "bad", &failure.Error{Kind: failure.Model, Source: failure.SourceModel, Message: "refused"}),
			wantKind: failure.Model, wantRuns: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			after := echoAgent(t, "after")
			seq, _ := workflow.NewSequential(workflow.SequentialConfig{Common: workflow.Common{Name: "s", Policy: fastPolicy()},
				Steps: []workflow.Step{{Runner: tc.step}, {Runner: after}}})
			evs, err := drain(seq.Stream(context.Background(), "x"))
			starts := 0
			for _, e := range top(evs, agent.EventStepStarted) {
				if e.Step.Name == tc.step.Name() {
					starts++
				}
			}
			if starts != tc.wantRuns {
				t.Fatalf("%d runs of the step, want %d", starts, tc.wantRuns)
			}
			if tc.wantKind == failure.Unknown {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if kind(t, err) != tc.wantKind {
				t.Fatalf("err = %v", err)
			}
			if n := len(top(evs, agent.EventFailure)); n != 1 {
				t.Fatalf("%d failure events", n)
			}
			last := evs[len(evs)-1]
			if last.Type != agent.EventRunFailed || last.Failure.Kind != tc.wantKind {
				t.Fatalf("last = %+v", last)
			}
			for _, e := range top(evs, agent.EventStepStarted) {
				if e.Step.Name == "after" {
					t.Fatal("a step ran after a failed one")
				}
			}
		})
	}
}

func TestParallel(t *testing.T) {
	var inFlight, peak atomic.Int32
	gate := make(chan struct{})
	slow := func(name string) *agent.Agent {
		return toolAgent(t, name, fn("work_"+name, func(ctx context.Context) (string, error) {
			n := inFlight.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			defer inFlight.Add(-1)
			select {
			case <-gate:
			case <-ctx.Done():
				return "", ctx.Err()
			}
			return "done " + name, nil
		}))
	}
	var branches []workflow.Step
	for i := range 5 {
		branches = append(branches, workflow.Step{Runner: slow(fmt.Sprintf("b%d", i))})
	}
	var mergeInput string
	merge := newAgent(t, agent.Config{Name: "merge", Model: llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
		mergeInput = lastUser(req)
		return llm.Say("merged")
	}))})
	p, err := workflow.NewParallel(workflow.ParallelConfig{Common: workflow.Common{Name: "fan"}, Branches: branches,
		MaxParallel: 2, Merge: &workflow.Step{Runner: merge}})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for range 5 {
			gate <- struct{}{}
		}
	}()
	ans, err := agent.Run(context.Background(), p, "task")
	if err != nil {
		t.Fatal(err)
	}
	if ans.Text != "merged" || ans.ToolCalls != 5 {
		t.Fatalf("answer = %+v", ans)
	}
	if peak.Load() > 2 {
		t.Fatalf("%d branches ran at once; MaxParallel is 2", peak.Load())
	}
	mustContain(t, mergeInput, "Task:\ntask", "Results of 5 branches", "## b0\nb0: ", "done b4")
}

func TestParallelBranchFailure(t *testing.T) {
	bad := &failure.Error{Kind: failure.Model, Source: failure.SourceModel, Message: "the model refused"}
	flaky := func(t *testing.T) *agent.Agent {
		var n atomic.Int32
		return newAgent(t, agent.Config{Name: "flaky", Policy: failure.NewPolicy(failure.PolicyConfig{MaxAttempts: 1}),
			Model: llm.NewCyclic(llm.React(func(*llm.Request) llm.Step {
				if n.Add(1) == 1 {
					return llm.Step{Err: &failure.Error{Kind: failure.Transient, Source: failure.SourceModel, Message: "503"}}
				}
				return llm.Say("recovered")
			}))})
	}
	cases := []struct {
		name     string
		drop     bool
		branches func(t *testing.T) []workflow.Step
		wantErr  failure.Kind
		wantText []string
		dropped  int
	}{
		{name: "transient failure retried",
			branches: func(t *testing.T) []workflow.Step {
				return []workflow.Step{{Runner: echoAgent(t, "ok")}, {Runner: flaky(t)}}
			},
			wantText: []string{"## ok\nok(t)", "## flaky\nrecovered"}},
		{name: "fail the workflow",
			branches: func(t *testing.T) []workflow.Step {
				return []workflow.Step{{Runner: echoAgent(t, "ok")}, {Runner: failingAgent(t, "bad", bad)}}
			},
			wantErr: failure.Model},
		{name: "drop with a note", drop: true,
			branches: func(t *testing.T) []workflow.Step {
				return []workflow.Step{{Runner: echoAgent(t, "ok")}, {Runner: failingAgent(t, "bad", bad)}}
			},
			wantText: []string{"## ok\nok(t)", "## bad (failed; dropped)", "the model refused"}, dropped: 1},
		{name: "all dropped fails", drop: true,
			branches: func(t *testing.T) []workflow.Step {
				return []workflow.Step{{Runner: failingAgent(t, "bad1", bad)}, {Runner: failingAgent(t, "bad2", bad)}}
			},
			wantErr: failure.Model, dropped: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := workflow.NewParallel(workflow.ParallelConfig{Common: workflow.Common{Name: "fan", Policy: fastPolicy()},
				Branches: tc.branches(t), DropFailed: tc.drop})
			if err != nil {
				t.Fatal(err)
			}
			evs, err := drain(p.Stream(context.Background(), "t"))
			dropped := 0
			for _, e := range top(evs, agent.EventStepFinished) {
				if e.Step.Dropped {
					dropped++
				}
			}
			if dropped != tc.dropped {
				t.Fatalf("%d dropped, want %d", dropped, tc.dropped)
			}
			if tc.wantErr != failure.Unknown {
				if kind(t, err) != tc.wantErr {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			mustContain(t, evs[len(evs)-1].Text, tc.wantText...)
		})
	}
}

// TestCancelMidPipeline cancels a pipeline while a parallel branch and a
// nested agent wait in tools: everything stops, no goroutine is left
// (TestMain's goleak), and every agent's history answers its calls.
func TestCancelMidPipeline(t *testing.T) {
	var waiting sync.WaitGroup
	waiting.Add(2)
	var cancelled atomic.Int32
	block := func(name string) agent.Tool {
		return fn(name, func(ctx context.Context) (string, error) {
			waiting.Done()
			<-ctx.Done()
			cancelled.Add(1)
			return "", ctx.Err()
		})
	}
	a1, a2 := toolAgent(t, "r1", block("w1")), toolAgent(t, "r2", block("w2"))
	p, _ := workflow.NewParallel(workflow.ParallelConfig{Common: workflow.Common{Name: "fan"},
		Branches: []workflow.Step{{Runner: a1}, {Runner: a2}}})
	seq, _ := workflow.NewSequential(workflow.SequentialConfig{Common: workflow.Common{Name: "pipe"},
		Steps: []workflow.Step{{Runner: echoAgent(t, "plan")}, {Runner: p}, {Runner: echoAgent(t, "never")}}})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { waiting.Wait(); cancel() }()
	evs, err := drain(seq.Stream(ctx, "x"))
	if kind(t, err) != failure.Canceled {
		t.Fatalf("err = %v", err)
	}
	if cancelled.Load() != 2 {
		t.Fatalf("%d tools saw the cancellation, want 2", cancelled.Load())
	}
	// Each branch's agent closed its run with a tool result for its call.
	fin := nestedOf(evs, agent.EventToolFinished)
	if len(fin) != 2 {
		t.Fatalf("%d tool_finished events in the branches, want 2", len(fin))
	}
	if n := len(nestedOf(evs, agent.EventRunFailed)); n < 3 { // two agents and the parallel workflow
		t.Fatalf("%d nested runs failed, want 3", n)
	}
	for _, e := range top(evs, agent.EventStepStarted) {
		if e.Step.Name == "never" {
			t.Fatal("a step started after the cancellation")
		}
	}
}

func TestStopIterating(t *testing.T) {
	seq, _ := workflow.NewSequential(workflow.SequentialConfig{Common: workflow.Common{Name: "s"},
		Steps: []workflow.Step{{Runner: echoAgent(t, "a")}, {Runner: echoAgent(t, "b")}}})
	n := 0
	for ev := range seq.Stream(context.Background(), "x") {
		n++
		if ev.Type == agent.EventStepStarted {
			break
		}
	}
	if n != 2 {
		t.Fatalf("saw %d events", n)
	}
}

func TestLoop(t *testing.T) {
	var drafts atomic.Int32
	writer := newAgent(t, agent.Config{Name: "writer", Model: llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
		return llm.Say(fmt.Sprintf("draft %d", drafts.Add(1)))
	}))})
	reviewer := func(approveAt string) *agent.Agent {
		return newAgent(t, agent.Config{Name: "reviewer", Model: llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
			if strings.Contains(lastUser(req), approveAt) {
				return llm.Say("APPROVED")
			}
			return llm.Say("needs more detail")
		}))})
	}
	cases := []struct {
		name       string
		approveAt  string
		acceptLast bool
		want       string
		wantKind   failure.Kind
	}{
		{name: "until approved", approveAt: "draft 3", want: "draft 3"},
		{name: "budget", approveAt: "never", wantKind: failure.Budget},
		{name: "budget, accept last", approveAt: "never", acceptLast: true, want: "draft 4"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			drafts.Store(0)
			var revisions []string
			l, err := workflow.NewLoop(workflow.LoopConfig{Common: workflow.Common{Name: "refine"},
				Body:  workflow.Step{Runner: writer},
				Check: &workflow.Step{Runner: reviewer(tc.approveAt)}, MaxIterations: 4, AcceptLast: tc.acceptLast,
				Until: func(ctx context.Context, it workflow.Input) (bool, error) {
					revisions = append(revisions, it.Feedback)
					return strings.Contains(strings.ToLower(it.Feedback), "approved"), nil
				}})
			if err != nil {
				t.Fatal(err)
			}
			ans, err := agent.Run(context.Background(), l, "write")
			if tc.wantKind != failure.Unknown {
				if kind(t, err) != tc.wantKind {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err != nil || ans.Text != tc.want {
				t.Fatalf("answer = %+v, %v; want %q", ans, err, tc.want)
			}
			if revisions[0] != "needs more detail" {
				t.Fatalf("feedback = %v", revisions)
			}
		})
	}
}

func TestLoopFeedsRevision(t *testing.T) {
	var inputs []string
	body := newAgent(t, agent.Config{Name: "body", Model: llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
		inputs = append(inputs, lastUser(req))
		return llm.Say(fmt.Sprintf("v%d", len(inputs)))
	}))})
	l, _ := workflow.NewLoop(workflow.LoopConfig{Common: workflow.Common{Name: "l"}, Body: workflow.Step{Runner: body},
		MaxIterations: 2, Until: func(_ context.Context, it workflow.Input) (bool, error) { return it.Index == 1, nil }})
	if _, err := agent.Run(context.Background(), l, "task"); err != nil {
		t.Fatal(err)
	}
	if len(inputs) != 2 || inputs[0] != "task" {
		t.Fatalf("inputs = %q", inputs)
	}
	mustContain(t, inputs[1], "Task:\ntask", "previous attempt:\nv1")
	cond := errors.New("condition broke")
	l2, _ := workflow.NewLoop(workflow.LoopConfig{Common: workflow.Common{Name: "l"}, Body: workflow.Step{Runner: echoAgent(t, "b")},
		Until: func(context.Context, workflow.Input) (bool, error) { return false, cond }})
	if _, err := agent.Run(context.Background(), l2, "task"); !errors.Is(err, cond) {
		t.Fatalf("err = %v", err)
	}
}
