package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/workflow"
	"github.com/switchboard-dev/switchboard/bus/worker"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// orchestrator is a local agent whose model, in its first turn, calls tools
// in parallel: one call per "tool:arg" of its input (separated by ";").
// It then summarises the results.
func orchestrator(t testing.TB, elicitor agent.Elicitor, tools ...agent.Tool) *agent.Agent {
	t.Helper()
	model := llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
		if len(testkit.LastToolResults(req)) > 0 {
			return llm.SummarizeResults("pipeline")
		}
		var calls []llm.ToolCall
		for i, part := range strings.Split(lastUser(req), ";") {
			tool, arg, _ := strings.Cut(part, ":")
			calls = append(calls, llm.CallTool(fmt.Sprintf("p%d", i), tool, map[string]string{"input": arg}))
		}
		return llm.Calls(calls...)
	}))
	a, err := agent.New(context.Background(), agent.Config{Name: "planner", Model: model, Tools: tools,
		Permissions: agent.AllowAll(), Elicitor: elicitor, Policy: fastPolicy(), ToolTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// stepTool offers the pool to an agent as the tool "step".
func stepTool(t testing.TB, p *worker.Pool) agent.Tool {
	t.Helper()
	tool, err := agent.AsTool(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// localBlock is a local tool that blocks until cancelled.
func localBlock(pr *probe) agent.Tool {
	return agent.NewFuncTool(agent.ToolSpec{Name: "local", Description: "A local step that blocks."},
		func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
			pr.started <- "local"
			<-ctx.Done()
			pr.ended <- ctx.Err()
			return nil, ctx.Err()
		})
}

// TestRoundTrip: a run on a worker streams back every event of the remote
// run (tool progress included), placed in the caller by Parent, and its
// answer; offered as a tool, the pool's events nest in the calling run.
func TestRoundTrip(t *testing.T) {
	c := newCluster(t)
	step := newStep(t, newProbe())
	serve(t, c.client("worker"), step, worker.ServeConfig{ID: "w1"})
	pool := newPool(t, c.host, "step", worker.PoolConfig{})

	t.Run("stream", func(t *testing.T) {
		parent := agent.Parent{Run: "run_caller", Step: "summarize"}
		ctx := agent.WithParent(ctxT(t, 20*time.Second), parent)
		evs, err := events(pool.Stream(ctx, "work hello"))
		if err != nil {
			t.Fatal(err)
		}
		got := types(evs)
		if want := "run_started,turn_started,model_turn,tool_started,tool_progress,tool_finished,turn_started,model_text"; !strings.HasPrefix(got, want) {
			t.Errorf("events %s, want a prefix %s", got, want)
		}
		last := evs[len(evs)-1]
		if last.Type != agent.EventFinal || last.Answer == nil || last.Answer.Text != "result: worked(hello)" {
			t.Fatalf("last event %+v", last)
		}
		for i, ev := range evs {
			if ev.Parent == nil || *ev.Parent != parent || ev.Agent != "step" || ev.Run != last.Run || ev.Seq != i+1 {
				t.Errorf("event %d (%s): run %s seq %d agent %q parent %+v", i, ev.Type, ev.Run, ev.Seq, ev.Agent, ev.Parent)
			}
			if ev.Type == agent.EventToolProgress && ev.Progress.Message != "working on hello" {
				t.Errorf("progress %+v", ev.Progress)
			}
		}
		// An event larger than the server's max payload arrives cut down.
		evs, err = events(pool.Stream(ctx, "big result"))
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if ev.Type == agent.EventToolFinished && (len(ev.Result.Parts) != 1 || !strings.Contains(ev.Result.Parts[0].Text, "[cut: 16384 of 2097152 bytes")) {
				t.Errorf("the large result was not cut: %d parts", len(ev.Result.Parts))
			}
		}
		if ans := evs[len(evs)-1].Answer; ans == nil || ans.Text != "result: "+strings.Repeat("x", 100) {
			t.Errorf("answer after a large result: %+v", ans)
		}
		step.next(t)
		ans, err := agent.Run(ctx, pool, "work again")
		if err != nil || ans.Text != "result: worked(again)" || ans.ToolCalls != 1 {
			t.Fatalf("agent.Run = %+v, %v", ans, err)
		}
		step.next(t)
		step.next(t)
	})

	t.Run("as a tool", func(t *testing.T) {
		planner := orchestrator(t, nil, stepTool(t, pool))
		ctx := ctxT(t, 20*time.Second)
		evs, err := events(planner.Stream(ctx, "step:work a;step:work b"))
		if err != nil {
			t.Fatal(err)
		}
		run := evs[0].Run
		nested := map[string]int{}
		for _, ev := range evs {
			if ev.Type != agent.EventNested {
				continue
			}
			n := ev.Nested
			if n.Parent == nil || n.Parent.Run != run || (n.Parent.Call != "p0" && n.Parent.Call != "p1") {
				t.Fatalf("nested %s has parent %+v, want run %s and call p0 or p1", n.Type, n.Parent, run)
			}
			nested[n.Parent.Call+":"+string(n.Type)]++
		}
		for _, k := range []string{"p0:run_started", "p0:tool_progress", "p0:final", "p1:run_started", "p1:final"} {
			if nested[k] != 1 {
				t.Errorf("nested %s seen %d times: %v", k, nested[k], nested)
			}
		}
		final := evs[len(evs)-1]
		if !strings.Contains(final.Text, "result: worked(a)") || !strings.Contains(final.Text, "result: worked(b)") {
			t.Errorf("final %q", final.Text)
		}
		step.next(t)
		step.next(t)
	})
}

// TestTypedFailures: failures come back typed: the remote run's own
// (keeping its kind and source, wrapping ErrRemote) and the pool's.
func TestTypedFailures(t *testing.T) {
	c := newCluster(t)
	serve(t, c.client("worker"), newStep(t, newProbe()), worker.ServeConfig{})
	pool := newPool(t, c.host, "step", worker.PoolConfig{})
	nobody := newPool(t, c.host, "nobody", worker.PoolConfig{})

	tests := []struct {
		name   string
		pool   *worker.Pool
		input  string
		kind   failure.Kind
		source failure.Source
		remote bool
	}{
		{"remote model failure", pool, "modelfail now", failure.Model, failure.SourceModel, true},
		{"remote budget", pool, "loop forever", failure.Budget, failure.SourceAgent, true},
		{"no worker", nobody, "work x", failure.Unavailable, failure.SourceBus, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := ctxT(t, 20*time.Second)
			start := time.Now()
			evs, err := events(tt.pool.Stream(ctx, tt.input))
			fe := wantKind(t, err, tt.kind, tt.source)
			if errors.Is(err, worker.ErrRemote) != tt.remote {
				t.Errorf("errors.Is(err, ErrRemote) = %v, want %v (%v)", !tt.remote, tt.remote, err)
			}
			last := evs[len(evs)-1]
			if last.Type != agent.EventRunFailed || last.Failure == nil || last.Failure.Kind != tt.kind {
				t.Errorf("last event %+v", last)
			}
			if !tt.remote {
				if fe.Name != "worker/nobody" || !strings.Contains(fe.Message, "no worker") {
					t.Errorf("failure %+v", fe)
				}
				// At once, give or take a loaded machine: far below the
				// CapacityWait (1 min) of a pool that waited for a worker.
				if d := time.Since(start); d > 10*time.Second {
					t.Errorf("no worker took %s to report", d)
				}
			}
			_, err = agent.Run(ctx, tt.pool, tt.input)
			wantKind(t, err, tt.kind, tt.source)
		})
	}
}

// TestDeadline: the caller's deadline travels with the request; the
// remote run ends on it with a Timeout, its tool cancelled and its history
// closed.
func TestDeadline(t *testing.T) {
	c := newCluster(t)
	pr := newProbe()
	step := newStep(t, pr)
	serve(t, c.client("worker"), step, worker.ServeConfig{})
	pool := newPool(t, c.host, "step", worker.PoolConfig{})

	// Long enough for a loaded machine to start the remote run before it,
	// so that the remote tool is what the deadline ends.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	evs, err := events(pool.Stream(ctx, "block until the deadline"))
	wantKind(t, err, failure.Timeout, "")
	if got := <-pr.ended; !errors.Is(got, context.DeadlineExceeded) && !errors.Is(got, context.Canceled) {
		t.Errorf("remote tool ended with %v", got)
	}
	remote := step.next(t)
	checkClosed(t, remote.hist)
	wantKind(t, remote.err, failure.Timeout, failure.SourceBus)
	if got := types(evs); !strings.Contains(got, "tool_finished") {
		t.Errorf("the remote call's result did not come back: %s", got)
	}
}

// TestCancelReachesWorker: cancelling the caller's context, or stopping
// the iteration, cancels the remote run: its tool sees the cancellation,
// its history gets a result for every call, and nothing keeps running.
func TestCancelReachesWorker(t *testing.T) {
	c := newCluster(t)
	pr := newProbe()
	step := newStep(t, pr)
	srv := serve(t, c.client("worker"), step, worker.ServeConfig{})
	pool := newPool(t, c.host, "step", worker.PoolConfig{})

	tests := []struct {
		name string
		stop bool // stop iterating instead of cancelling ctx
	}{
		{"context cancelled", false},
		{"consumer stops", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(ctxT(t, 20*time.Second))
			defer cancel()
			var evs []agent.Event
			var err error
			for ev, e := range pool.Stream(ctx, "block me") {
				evs = append(evs, ev)
				err = e
				if ev.Type == agent.EventToolStarted {
					<-pr.started
					if tt.stop {
						break
					}
					cancel()
				}
			}
			if got := <-pr.ended; !errors.Is(got, context.Canceled) {
				t.Errorf("remote tool ended with %v, want cancelled", got)
			}
			remote := step.next(t)
			checkClosed(t, remote.hist)
			wantKind(t, remote.err, failure.Canceled, "")
			waitFor(t, "the worker to be idle", func() bool { return srv.Stats().Running == 0 })
			if tt.stop {
				return
			}
			wantKind(t, err, failure.Canceled, "")
			if got := types(evs); !strings.HasSuffix(got, "tool_started,failure,tool_finished,run_failed") {
				t.Errorf("the remote run's last events did not come back: %s", got)
			}
		})
	}
}

// fixed renders a workflow step's input as s.
func fixed(s string) func(workflow.Input) string { return func(workflow.Input) string { return s } }

// TestPipelineCancel: cancelling a pipeline (an agent calling steps as
// tools, or a workflow) reaches every running step, local or remote, and
// every step's tool calls still get their results.
func TestPipelineCancel(t *testing.T) {
	tests := []struct {
		name string
		// pipeline builds the pipeline over a local step and the pool, and
		// returns it with the history of its local part once it has run.
		pipeline func(t *testing.T, local agent.Tool, localStep *recorder, pool *worker.Pool) (agent.Runner, func() []llm.Message)
		// quickDone spots the final event of the quick remote step.
		quickDone func(p *agent.Parent) bool
	}{
		{"agent with steps as tools", func(t *testing.T, local agent.Tool, _ *recorder, pool *worker.Pool) (agent.Runner, func() []llm.Message) {
			s := orchestrator(t, nil, stepTool(t, pool), local).NewSession()
			return sessionRunner{s, "step:block remote;local:x;step:work quick"}, s.History
		}, func(p *agent.Parent) bool { return p.Call == "p2" }},
		{"parallel workflow", func(t *testing.T, _ agent.Tool, localStep *recorder, pool *worker.Pool) (agent.Runner, func() []llm.Message) {
			wf, err := workflow.NewParallel(workflow.ParallelConfig{Common: workflow.Common{Name: "pipeline", Policy: fastPolicy()},
				Branches: []workflow.Step{
					{Runner: localStep, Name: "local", Input: fixed("block local")},
					{Runner: pool, Name: "remote", Input: fixed("block remote")},
					{Runner: pool, Name: "quick", Input: fixed("work quick")},
				}})
			if err != nil {
				t.Fatal(err)
			}
			return wf, func() []llm.Message { return localStep.next(t).hist }
		}, func(p *agent.Parent) bool { return p.Step == "quick" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t)
			remotePr, localPr := newProbe(), newProbe()
			step := newStep(t, remotePr)
			serve(t, c.client("worker"), step, worker.ServeConfig{})
			pool := newPool(t, c.host, "step", worker.PoolConfig{})
			pipeline, localHist := tt.pipeline(t, localBlock(localPr), newStep(t, localPr), pool)

			// Cancel once both blocking steps run and the quick one answered.
			ctx, cancel := context.WithCancel(ctxT(t, 20*time.Second))
			defer cancel()
			quick := make(chan struct{})
			go func() {
				<-remotePr.started
				<-localPr.started
				<-quick
				cancel()
			}()
			var err error
			for ev, e := range pipeline.Stream(ctx, "") {
				if n := ev.Nested; ev.Type == agent.EventNested && n.Type == agent.EventFinal && tt.quickDone(n.Parent) {
					close(quick)
				}
				err = e
			}
			wantKind(t, err, failure.Canceled, "")
			for name, pr := range map[string]*probe{"remote": remotePr, "local": localPr} {
				if got := <-pr.ended; !errors.Is(got, context.Canceled) {
					t.Errorf("%s step ended with %v", name, got)
				}
			}
			checkClosed(t, localHist())
			var cancelled int
			for i := 0; i < 2; i++ {
				r := step.next(t)
				checkClosed(t, r.hist)
				if r.err != nil {
					cancelled++
					wantKind(t, r.err, failure.Canceled, "")
				}
			}
			if cancelled != 1 {
				t.Errorf("%d remote runs cancelled, want 1 (the quick one finished)", cancelled)
			}
		})
	}
}

// sessionRunner runs a fixed input in a session (whose history the test
// reads afterwards).
type sessionRunner struct {
	s     *agent.Session
	input string
}

func (r sessionRunner) Name() string        { return "session" }
func (r sessionRunner) Description() string { return "a session" }
func (r sessionRunner) Stream(ctx context.Context, _ string) iter.Seq2[agent.Event, error] {
	return r.s.Stream(ctx, r.input)
}

// TestElicitation: the remote run's questions come back to the caller:
// through the tool call the pool runs in, else PoolConfig.Elicitor, else
// they are declined.
func TestElicitation(t *testing.T) {
	c := newCluster(t)
	serve(t, c.client("worker"), newStep(t, newProbe()), worker.ServeConfig{})
	answer := func(city string, asked *[]string) agent.Elicitor {
		return agent.ElicitorFunc(func(_ context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
			*asked = append(*asked, e.Message+"|"+e.Run+"|"+e.Call)
			return agent.ElicitationResult{Action: agent.ElicitAccept, Content: map[string]any{"text": city}}, nil
		})
	}
	tests := []struct {
		name     string
		run      func(ctx context.Context, asked *[]string) (string, error)
		want     string
		wantCall string // the call the question is tagged with, when asked through one
	}{
		{"pool elicitor", func(ctx context.Context, asked *[]string) (string, error) {
			pool := newPool(t, c.host, "step", worker.PoolConfig{Elicitor: answer("Paris", asked)})
			ans, err := agent.Run(ctx, pool, "ask weather")
			if err != nil {
				return "", err
			}
			return ans.Text, nil
		}, "result: answer: Paris", ""},
		{"caller's tool call", func(ctx context.Context, asked *[]string) (string, error) {
			pool := newPool(t, c.host, "step", worker.PoolConfig{Elicitor: answer("wrong", new([]string))})
			planner := orchestrator(t, answer("Lyon", asked), stepTool(t, pool))
			ans, err := planner.Run(ctx, "step:ask weather")
			if err != nil {
				return "", err
			}
			return ans.Text, nil
		}, "result: answer: Lyon", "p0"},
		{"no elicitor", func(ctx context.Context, _ *[]string) (string, error) {
			ans, err := agent.Run(ctx, newPool(t, c.host, "step", worker.PoolConfig{}), "ask weather")
			if err != nil {
				return "", err
			}
			return ans.Text, nil
		}, "result: no answer: decline", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked []string
			got, err := tt.run(ctxT(t, 20*time.Second), &asked)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("answer %q does not contain %q", got, tt.want)
			}
			if tt.name == "no elicitor" {
				return
			}
			if len(asked) != 1 || !strings.HasPrefix(asked[0], "Which city? (weather)|") || !strings.HasSuffix(asked[0], "|"+tt.wantCall) && tt.wantCall != "" {
				t.Errorf("questions asked: %q", asked)
			}
		})
	}
}

// TestNoWorkerKeepsCircuitClosed: runs on a pool nobody serves fail at
// once with ErrNoWorker, however many, and do not open the pool's circuit:
// the first run after a worker starts serving goes to it.
func TestNoWorkerKeepsCircuitClosed(t *testing.T) {
	c := newCluster(t)
	pool := newPool(t, c.host, "step", worker.PoolConfig{})
	ctx := ctxT(t, 20*time.Second)
	for i := range 8 { // more than the default policy's breaker threshold
		_, err := agent.Run(ctx, pool, "work x")
		wantKind(t, err, failure.Unavailable, failure.SourceBus)
		if !errors.Is(err, worker.ErrNoWorker) {
			t.Fatalf("run %d: %v does not wrap ErrNoWorker", i, err)
		}
	}
	serve(t, c.client("worker"), newStep(t, newProbe()), worker.ServeConfig{})
	if _, err := agent.Run(ctx, pool, "work x"); err != nil {
		t.Fatalf("the first run after a worker started: %v", err)
	}
}
