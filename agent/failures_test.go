package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// TestFailureHandling drives each failure kind of the design's table
// through a run and checks what the model sees, what the run returns, the
// failure event, and that every call got exactly one result.
func TestFailureHandling(t *testing.T) {
	transientThenOK := func() agent.Tool {
		var n atomic.Int32
		return tool("flaky", func(context.Context, json.RawMessage) (*agent.Result, error) {
			if n.Add(1) < 3 {
				return nil, failure.New(failure.Transient, failure.SourceTool, "connection reset")
			}
			return agent.TextResult("ok after retries"), nil
		})
	}
	cases := []struct {
		name     string
		tools    []agent.Tool
		perms    *agent.Permissions
		elicitor agent.Elicitor
		budget   agent.Budget
		timeout  time.Duration
		call     llm.ToolCall
		// wantKind is the failure kind handled for the call (Unknown: none).
		wantKind failure.Kind
		// wantText must appear in the result the model sees.
		wantText string
		// wantRunErr is the kind the run fails with (Unknown: the run succeeds).
		wantRunErr failure.Kind
	}{
		{name: "retry then success", tools: []agent.Tool{transientThenOK()},
			call: llm.CallTool("c1", "flaky", map[string]any{}), wantText: "ok after retries"},
		{name: "transient exhausted", tools: []agent.Tool{tool("down", func(context.Context, json.RawMessage) (*agent.Result, error) {
			return nil, failure.New(failure.Transient, failure.SourceTool, "503 from upstream")
		})}, call: llm.CallTool("c1", "down", nil), wantKind: failure.Transient, wantText: "503 from upstream"},
		{name: "unknown tool", tools: []agent.Tool{echoTool("echo", nil)},
			call: llm.CallTool("c1", "nope", map[string]any{}), wantKind: failure.UnknownTool, wantText: `no tool named "nope"`},
		{name: "arguments not JSON", tools: []agent.Tool{echoTool("echo", nil)},
			call: llm.CallTool("c1", "echo", `{"a":`), wantKind: failure.InvalidArgs, wantText: "not valid JSON"},
		{name: "arguments not an object", tools: []agent.Tool{echoTool("echo", nil)},
			call: llm.CallTool("c1", "echo", `[1,2]`), wantKind: failure.InvalidArgs, wantText: "must be a JSON object"},
		{name: "arguments violate schema", tools: []agent.Tool{agent.NewFuncTool(agent.ToolSpec{Name: "typed",
			InputSchema: json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)},
			func(context.Context, json.RawMessage) (*agent.Result, error) { return agent.TextResult("ran"), nil })},
			call: llm.CallTool("c1", "typed", map[string]any{"n": "x"}), wantKind: failure.InvalidArgs, wantText: "/n"},
		{name: "tool reports isError", tools: []agent.Tool{tool("bad", func(context.Context, json.RawMessage) (*agent.Result, error) {
			return agent.ErrorResult("file not found: a.txt"), nil
		})}, call: llm.CallTool("c1", "bad", nil), wantKind: failure.ToolError, wantText: "file not found: a.txt"},
		{name: "plain error from tool", tools: []agent.Tool{tool("oops", func(context.Context, json.RawMessage) (*agent.Result, error) {
			return nil, errors.New("disk full; password=hunter2")
		})}, call: llm.CallTool("c1", "oops", nil), wantKind: failure.Unknown, wantText: "disk full; password=[REDACTED]"},
		{name: "permission denied", tools: []agent.Tool{echoTool("run_shell", nil)}, perms: &agent.Permissions{},
			call: llm.CallTool("c1", "run_shell", nil), wantKind: failure.PermissionDenied, wantText: "denies"},
		{name: "ask without anyone to ask", tools: []agent.Tool{echoTool("write_file", nil)}, perms: &agent.Permissions{},
			call: llm.CallTool("c1", "write_file", nil), wantKind: failure.PermissionDenied, wantText: "no one is available"},
		{name: "ask declined", tools: []agent.Tool{echoTool("write_file", nil)}, perms: &agent.Permissions{},
			elicitor: agent.ElicitorFunc(func(context.Context, agent.Elicitation) (agent.ElicitationResult, error) {
				return agent.ElicitationResult{Action: agent.ElicitDecline, Reason: "not today"}, nil
			}), call: llm.CallTool("c1", "write_file", nil), wantKind: failure.Declined, wantText: "not today"},
		{name: "ask approved", tools: []agent.Tool{echoTool("write_file", nil)}, perms: &agent.Permissions{},
			elicitor: agent.ElicitorFunc(func(_ context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
				if e.Kind != agent.ElicitPermission || e.Tool != "write_file" || e.Run == "" || e.Call != "c1" {
					return agent.ElicitationResult{Action: agent.ElicitDecline, Reason: "bad question"}, nil
				}
				return agent.ElicitationResult{Action: agent.ElicitAccept}, nil
			}), call: llm.CallTool("c1", "write_file", map[string]any{"path": "a"}), wantText: `echo {"path":"a"}`},
		{name: "asker fails", tools: []agent.Tool{echoTool("write_file", nil)}, perms: &agent.Permissions{},
			elicitor: agent.ElicitorFunc(func(context.Context, agent.Elicitation) (agent.ElicitationResult, error) {
				return agent.ElicitationResult{}, failure.New(failure.Unavailable, failure.SourceBus, "no responders")
			}), call: llm.CallTool("c1", "write_file", nil), wantKind: failure.PermissionDenied, wantText: "could not be obtained"},
		{name: "timeout reaches the tool", timeout: 20 * time.Millisecond, tools: []agent.Tool{tool("slow", func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})}, call: llm.CallTool("c1", "slow", nil), wantKind: failure.Timeout, wantText: "did not finish within 20ms and was cancelled"},
		{name: "panic in a tool ends the run", tools: []agent.Tool{tool("boom", func(context.Context, json.RawMessage) (*agent.Result, error) {
			panic("kaboom")
		})}, call: llm.CallTool("c1", "boom", nil), wantKind: failure.Panic, wantText: "crashed", wantRunErr: failure.Panic},
		{name: "tool-call budget", budget: agent.Budget{MaxToolCalls: -1}, tools: []agent.Tool{echoTool("echo", nil)},
			call: llm.CallTool("c1", "echo", nil), wantText: "echo {}"},
		{name: "token budget", budget: agent.Budget{MaxRunTokens: 1}, tools: []agent.Tool{echoTool("echo", nil)},
			call: llm.CallTool("c1", "echo", nil), wantKind: failure.Budget, wantText: "tokens is exhausted", wantRunErr: failure.Budget},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			perms := tc.perms
			if perms == nil {
				perms = agent.AllowAll()
			}
			model := llm.NewScripted(llm.Calls(tc.call), llm.SummarizeResults("done"))
			a := newAgent(t, agent.Config{Model: model, Tools: tc.tools, Permissions: perms, Elicitor: tc.elicitor,
				Budget: tc.budget, ToolTimeout: tc.timeout})
			s := a.NewSession()
			evs, err := collect(t, s.Stream(context.Background(), "go"))
			if tc.wantRunErr == failure.Unknown {
				if err != nil {
					t.Fatalf("run failed: %v", err)
				}
			} else if got := kindOf(t, err); got != tc.wantRunErr {
				t.Fatalf("run error kind = %s, want %s (%v)", got, tc.wantRunErr, err)
			}
			hist := s.History()
			checkOneResultPerCall(t, hist)
			res := lastResults(hist)
			if len(res) != 1 {
				t.Fatalf("got %d results, want 1", len(res))
			}
			if !strings.Contains(res[0].Content, tc.wantText) {
				t.Errorf("model saw %q, want it to contain %q", res[0].Content, tc.wantText)
			}
			if res[0].IsError != (tc.wantKind != failure.Unknown || tc.name == "plain error from tool") {
				t.Errorf("IsError = %v", res[0].IsError)
			}
			fails := eventsOf(evs, agent.EventFailure)
			if tc.wantKind != failure.Unknown || tc.name == "plain error from tool" {
				if len(fails) == 0 || fails[0].Failure.Kind != tc.wantKind {
					t.Fatalf("failure events = %+v, want first of kind %s", fails, tc.wantKind)
				}
				if fails[0].Call == nil || fails[0].Call.ID != "c1" {
					t.Errorf("failure event does not name the call: %+v", fails[0])
				}
				if tc.wantRunErr != failure.Budget && len(fails) != 1 {
					t.Errorf("%d failure events, want the failure handled once", len(fails))
				}
			} else if len(fails) != 0 {
				t.Errorf("unexpected failure events: %+v", fails[0].Failure)
			}
			if len(eventsOf(evs, agent.EventToolFinished)) != 1 {
				t.Errorf("want exactly one tool_finished event")
			}
		})
	}
}

// TestCircuitOpensAndRecovers: after repeated source failures the circuit
// opens, calls fail at once as Unavailable without reaching the tool, the
// tool is advertised as unavailable, and after the cooldown it recovers.
// It runs on synctest's clock: the cooldown cannot pass between the runs
// that expect the circuit open, however slow the machine.
func TestCircuitOpensAndRecovers(t *testing.T) { synctest.Test(t, testCircuitOpensAndRecovers) }

func testCircuitOpensAndRecovers(t *testing.T) {
	var healthy atomic.Bool
	var reached atomic.Int32
	flaky := tool("remote", func(context.Context, json.RawMessage) (*agent.Result, error) {
		reached.Add(1)
		if !healthy.Load() {
			return nil, failure.New(failure.Transient, failure.SourceTool, "connection refused")
		}
		return agent.TextResult("back"), nil
	})
	var sawUnavailable atomic.Bool
	model := llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
		for _, d := range req.Tools {
			if strings.HasPrefix(d.Description, "(currently unavailable") {
				sawUnavailable.Store(true)
			}
		}
		if len(testkit.LastToolResults(req)) > 0 {
			return llm.SummarizeResults("done")
		}
		return llm.Calls(llm.CallTool("c", "remote", nil))
	}))
	cooldown := 50 * time.Millisecond
	a := newAgent(t, agent.Config{Model: model, Tools: []agent.Tool{flaky}, Policy: fastPolicy(cooldown)})
	ctx := context.Background()
	// Policy: 3 attempts per call, 3 consecutive failures open the circuit.
	if _, err := a.Run(ctx, "first"); err != nil {
		t.Fatal(err)
	}
	if got := reached.Load(); got != 3 {
		t.Fatalf("tool reached %d times, want 3 attempts", got)
	}
	s := a.NewSession()
	if _, err := s.Run(ctx, "second"); err != nil {
		t.Fatal(err)
	}
	if got := reached.Load(); got != 3 {
		t.Fatalf("open circuit let a call through (%d)", got)
	}
	if r := lastResults(s.History()); !strings.Contains(r[0].Content, "unavailable") {
		t.Fatalf("model saw %q, want unavailable", r[0].Content)
	}
	if !sawUnavailable.Load() {
		t.Error("tool of an open circuit was not advertised as unavailable")
	}
	healthy.Store(true)
	time.Sleep(2 * cooldown) // the fake clock: the cooldown passes
	s = a.NewSession()
	if _, err := s.Run(ctx, "third"); err != nil {
		t.Fatal(err)
	}
	if r := lastResults(s.History()); !strings.Contains(r[0].Content, "back") {
		t.Fatalf("after cooldown the model saw %q, want recovery", r[0].Content)
	}
	// The bubble ends once its goroutines have: the guard pool's idle
	// worker exits after its idle timeout.
	testkit.WaitFor(t, 10*time.Second, "the guard pool's workers to exit", func() bool { return agent.GuardWorkers(a) == 0 })
}

// TestCancellationReachesTools cancels the run while tools are running: the
// tools see the cancellation, every call gets a result, the run ends Canceled.
func TestCancellationReachesTools(t *testing.T) {
	started := make(chan struct{}, 2)
	var cancelled atomic.Int32
	block := func(name string) agent.Tool {
		return tool(name, func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
			started <- struct{}{}
			<-ctx.Done()
			cancelled.Add(1)
			return nil, ctx.Err()
		})
	}
	model := llm.NewScripted(llm.Calls(llm.CallTool("a", "block1", nil), llm.CallTool("b", "block2", nil)))
	a := newAgent(t, agent.Config{Model: model, Tools: []agent.Tool{block("block1"), block("block2")}})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		<-started
		cancel()
	}()
	s := a.NewSession()
	_, err := s.Run(ctx, "go")
	if !errors.Is(err, failure.Canceled) {
		t.Fatalf("run error = %v, want Canceled", err)
	}
	if cancelled.Load() != 2 {
		t.Fatalf("cancellation reached %d tools, want 2", cancelled.Load())
	}
	hist := s.History()
	checkOneResultPerCall(t, hist)
	if last := hist[len(hist)-1]; last.Role != llm.RoleAssistant {
		t.Errorf("history does not end with an assistant message; continuing would break alternation")
	}
}

// TestStopIteratingCancelsRun: a consumer that stops reading the stream
// cancels the run, and the session stays usable.
func TestStopIteratingCancelsRun(t *testing.T) {
	var sawCancel atomic.Bool
	slow := tool("slow", func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
		c, _ := agent.CallFromContext(ctx)
		c.ReportProgress(agent.Progress{Progress: 1, Message: "working"})
		<-ctx.Done()
		sawCancel.Store(true)
		return nil, ctx.Err()
	})
	model := llm.NewScripted(llm.Calls(llm.CallTool("a", "slow", nil)), llm.Say("second answer"))
	a := newAgent(t, agent.Config{Model: model, Tools: []agent.Tool{slow}})
	s := a.NewSession()
	for ev, err := range s.Stream(context.Background(), "go") {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == agent.EventToolProgress {
			break
		}
	}
	if !sawCancel.Load() {
		t.Fatal("stopping the iteration did not cancel the tool")
	}
	checkOneResultPerCall(t, s.History())
	ans, err := s.Run(context.Background(), "again")
	if err != nil || ans.Text != "second answer" {
		t.Fatalf("continuing after a stopped stream: %v %v", ans, err)
	}
}

// TestBudgets covers the turn and wall-time budgets.
func TestBudgets(t *testing.T) {
	loop := llm.NewCyclic(llm.Calls(llm.CallTool("", "echo", nil)))
	a := newAgent(t, agent.Config{Model: loop, Tools: []agent.Tool{echoTool("echo", nil)}, Budget: agent.Budget{MaxTurns: 3}})
	s := a.NewSession()
	ans, err := s.Run(context.Background(), "loop forever")
	if !errors.Is(err, failure.Budget) || !strings.Contains(err.Error(), "3 model turns") {
		t.Fatalf("turn budget: %v", err)
	}
	if ans.Turns != 3 || ans.ToolCalls != 3 {
		t.Errorf("turns=%d calls=%d, want 3 and 3", ans.Turns, ans.ToolCalls)
	}
	checkOneResultPerCall(t, s.History())

	calls := llm.NewScripted(llm.Calls(llm.CallTool("1", "echo", nil), llm.CallTool("2", "echo", nil), llm.CallTool("3", "echo", nil)))
	var ran atomic.Int32
	a = newAgent(t, agent.Config{Model: calls, Tools: []agent.Tool{echoTool("echo", &ran)}, Budget: agent.Budget{MaxToolCalls: 2}})
	s = a.NewSession()
	_, err = s.Run(context.Background(), "three calls")
	if !errors.Is(err, failure.Budget) || ran.Load() != 2 {
		t.Fatalf("tool-call budget: err=%v ran=%d", err, ran.Load())
	}
	checkOneResultPerCall(t, s.History())

	slow := tool("slow", func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	a = newAgent(t, agent.Config{Model: llm.NewScripted(llm.Calls(llm.CallTool("s", "slow", nil))),
		Tools: []agent.Tool{slow}, Budget: agent.Budget{MaxDuration: 30 * time.Millisecond}})
	s = a.NewSession()
	_, err = s.Run(context.Background(), "slow")
	if !errors.Is(err, failure.Budget) || !strings.Contains(err.Error(), "time budget") {
		t.Fatalf("time budget: %v", err)
	}
	checkOneResultPerCall(t, s.History())
}

// TestModelFailures: a model error and an empty response are typed outcomes
// and leave the session usable.
func TestModelFailures(t *testing.T) {
	cases := []struct {
		name string
		step llm.Step
		want failure.Kind
	}{
		{"empty response", llm.Say(""), failure.Model},
		{"provider rejects request", llm.Step{Err: failure.New(failure.Model, failure.SourceModel, "400 bad request")}, failure.Model},
		{"unclassified provider error", llm.Step{Err: errors.New("weird")}, failure.Model},
		{"rate limited after retries", llm.Step{Err: failure.New(failure.Transient, failure.SourceModel, "429")}, failure.Transient},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			model := llm.NewCyclic(tc.step)
			a := newAgent(t, agent.Config{Model: model})
			s := a.NewSession()
			_, err := s.Run(context.Background(), "hi")
			if got := kindOf(t, err); got != tc.want {
				t.Fatalf("kind = %s, want %s (%v)", got, tc.want, err)
			}
			if len(s.History()) != 0 {
				t.Errorf("a failed first turn left history behind: %+v", s.History())
			}
		})
	}
}

// TestRunFailedEvent: a failed run ends with EventRunFailed, paired with the
// run's error in the stream and sent to the sink like every event.
func TestRunFailedEvent(t *testing.T) {
	var last agent.Event
	sink := agent.EventSinkFunc(func(_ context.Context, ev agent.Event) { last = ev })
	a := newAgent(t, agent.Config{Model: llm.NewScripted(llm.Say("")), Events: sink})
	var gotEv agent.Event
	var gotErr error
	for ev, err := range a.Stream(context.Background(), "hi") {
		gotEv, gotErr = ev, err
	}
	if gotErr == nil || gotEv.Type != agent.EventRunFailed || gotEv.Failure == nil || gotEv.Failure.Kind != failure.Model {
		t.Fatalf("last pair = %+v, %v", gotEv, gotErr)
	}
	if last.Type != agent.EventRunFailed || last.Seq != gotEv.Seq {
		t.Fatalf("sink's last event = %+v", last)
	}
}

// TestToolIgnoringCancellation: a tool that never returns does not hang
// the run: after its timeout and a grace period the agent stops waiting,
// the call gets a timeout result, and the run goes on.
func TestToolIgnoringCancellation(t *testing.T) {
	release := make(chan struct{})
	stuck := tool("stuck", func(context.Context, json.RawMessage) (*agent.Result, error) {
		<-release // ignores its context
		return agent.TextResult("too late"), nil
	})
	defer close(release)
	model := llm.NewScripted(llm.Calls(llm.CallTool("1", "stuck", nil)), llm.SummarizeResults("done"))
	a := newAgent(t, agent.Config{Model: model, Tools: []agent.Tool{stuck}, ToolTimeout: 10 * time.Millisecond})
	s := a.NewSession()
	ans, err := s.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	r := lastResults(s.History())
	if len(r) != 1 || !r[0].IsError || !strings.Contains(r[0].Content, "did not finish within 10ms") {
		t.Fatalf("results %+v", r)
	}
	if !strings.Contains(ans.Text, "1 errors") {
		t.Fatalf("answer %q", ans.Text)
	}
}

// TestSkillFailuresHaveOneSource: a skill tool's failures, whether the
// tool names its source as the skills package does, leaves it to the
// agent, or returns an error result, are all reported under
// failure.SourceSkill, and they count against one circuit, keyed by it.
func TestSkillFailuresHaveOneSource(t *testing.T) {
	cases := []struct {
		name     string
		result   func() (*agent.Result, error)
		wantOpen bool // the failures open the circuit
	}{
		{name: "named by the skills package", wantOpen: true, result: func() (*agent.Result, error) {
			return nil, &failure.Error{Kind: failure.Internal, Source: failure.SourceSkill, Name: "skills", Message: "broken"}
		}},
		{name: "named by the agent", wantOpen: true, result: func() (*agent.Result, error) {
			return nil, &failure.Error{Kind: failure.Internal, Message: "broken"}
		}},
		{name: "error result", result: func() (*agent.Result, error) { return agent.ErrorResult("no such page"), nil }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var sources []failure.Source
			var opened []failure.Key
			policy := failure.NewPolicy(failure.PolicyConfig{MaxAttempts: 1, BreakerFailures: 2, BreakerCooldown: time.Minute,
				OnFailure: func(_ context.Context, o failure.Outcome) {
					mu.Lock()
					defer mu.Unlock()
					sources = append(sources, o.Err.Source)
				},
				OnStateChange: func(k failure.Key, _, to string) {
					mu.Lock()
					defer mu.Unlock()
					if to == "open" {
						opened = append(opened, k)
					}
				}})
			sk := agent.NewFuncTool(agent.ToolSpec{Name: "read_skill_file", ReadOnly: true,
				Source: agent.Provenance{Kind: failure.SourceSkill, Name: "skills", Tool: "read_skill_file"}},
				func(context.Context, json.RawMessage) (*agent.Result, error) { return tc.result() })
			call := llm.Calls(llm.CallTool("c", "read_skill_file", nil))
			a := newAgent(t, agent.Config{Tools: []agent.Tool{sk}, Policy: policy,
				Model: llm.NewScripted(call, call, call, llm.Say("done"))})
			if _, err := a.Run(context.Background(), "go"); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(sources) != 3 {
				t.Fatalf("%d failures handled, want 3", len(sources))
			}
			for i, s := range sources {
				if s != failure.SourceSkill {
					t.Errorf("failure %d has source %q, want %q", i, s, failure.SourceSkill)
				}
			}
			want := failure.Key{Source: failure.SourceSkill, Name: "skills"}
			if tc.wantOpen && (len(opened) != 1 || opened[0] != want) {
				t.Errorf("circuits opened: %v, want one: %v", opened, want)
			}
			if !tc.wantOpen && len(opened) != 0 {
				t.Errorf("error results opened circuits %v", opened)
			}
			if got := policy.Available(want); got == tc.wantOpen {
				t.Errorf("Available(%v) = %v", want, got)
			}
		})
	}
}
