package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// coopTool is a tool that honours cancellation (agent.Cooperative) and
// records the goroutine it ran on.
type coopTool struct {
	spec agent.ToolSpec
	fn   func(ctx context.Context) (*agent.Result, error)
	mu   sync.Mutex
	args []json.RawMessage
}

func (c *coopTool) Spec() agent.ToolSpec      { return c.spec }
func (c *coopTool) HonoursCancellation() bool { return true }
func (c *coopTool) Call(ctx context.Context, args json.RawMessage) (*agent.Result, error) {
	c.mu.Lock()
	c.args = append(c.args, args)
	c.mu.Unlock()
	return c.fn(ctx)
}

func TestSourceValidatedArgs(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)
	bad := map[string]any{"n": "not a number"}
	cases := []struct {
		name      string
		source    bool
		always    bool
		perm      agent.Permission
		wantKind  failure.Kind // of the handled failure; Unknown: the tool ran
		wantCalls int
	}{
		{name: "agent validates its own tools", perm: agent.Allow, wantKind: failure.InvalidArgs},
		{name: "source validates: passed through", source: true, perm: agent.Allow, wantCalls: 1},
		{name: "source validates, but a person is asked", source: true, perm: agent.Ask, wantKind: failure.InvalidArgs},
		{name: "AlwaysValidateArgs", source: true, always: true, perm: agent.Allow, wantKind: failure.InvalidArgs},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tl := &coopTool{spec: agent.ToolSpec{Name: "count", Description: "d", InputSchema: schema, SourceValidates: tc.source},
				fn: func(context.Context) (*agent.Result, error) { return agent.ErrorResult("n must be an integer"), nil }}
			asked := 0
			a := newAgent(t, agent.Config{Name: "a", Tools: []agent.Tool{tl}, AlwaysValidateArgs: tc.always,
				Permissions: &agent.Permissions{Rules: []agent.Rule{{Tool: "count", Permission: tc.perm}}},
				Elicitor: agent.ElicitorFunc(func(context.Context, agent.Elicitation) (agent.ElicitationResult, error) {
					asked++
					return agent.ElicitationResult{Action: agent.ElicitAccept}, nil
				}),
				Model: llm.NewScripted(llm.Calls(llm.CallTool("c", "count", bad)), llm.Say("ok"))})
			evs, err := collect(t, a.Stream(context.Background(), "go"))
			if err != nil {
				t.Fatal(err)
			}
			if len(tl.args) != tc.wantCalls {
				t.Fatalf("the tool ran %d times, want %d", len(tl.args), tc.wantCalls)
			}
			fails := eventsOf(evs, agent.EventFailure)
			if tc.wantKind != failure.Unknown {
				if len(fails) != 1 || fails[0].Failure.Kind != tc.wantKind {
					t.Fatalf("failures = %+v", fails)
				}
				if asked != 0 {
					t.Fatal("a person was asked to approve a call with invalid arguments")
				}
			}
		})
	}
}

// TestCooperativeInline checks the detached path: in Session.Run a single
// call of a cooperative tool runs on the run's goroutine; its progress
// reaches the sink in order, and a panic is still recovered.
func TestCooperativeInline(t *testing.T) {
	cases := []struct {
		name     string
		fn       func(ctx context.Context) (*agent.Result, error)
		wantKind failure.Kind
		progress int
	}{
		{name: "progress", progress: 3, fn: func(ctx context.Context) (*agent.Result, error) {
			c, _ := agent.CallFromContext(ctx)
			var wg sync.WaitGroup
			for i := range 3 { // reported from other goroutines, one after another
				wg.Add(1)
				go func() { defer wg.Done(); c.ReportProgress(agent.Progress{Progress: float64(i + 1), Total: 3}) }()
				wg.Wait()
			}
			return agent.TextResult("done"), nil
		}},
		{name: "panic", wantKind: failure.Panic, fn: func(context.Context) (*agent.Result, error) { panic("boom") }},
		{name: "finished after cancel", wantKind: failure.Canceled, fn: func(ctx context.Context) (*agent.Result, error) {
			<-ctx.Done()
			return agent.TextResult("late"), nil
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var evs []agent.Event
			sink := agent.EventSinkFunc(func(_ context.Context, ev agent.Event) {
				mu.Lock()
				evs = append(evs, ev)
				mu.Unlock()
			})
			var runG, toolG []byte
			tl := &coopTool{spec: agent.ToolSpec{Name: "work", Description: "d", ReadOnly: true}}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			tl.fn = func(ctx context.Context) (*agent.Result, error) {
				toolG = goroutineID()
				if tc.wantKind == failure.Canceled {
					cancel()
				}
				return tc.fn(ctx)
			}
			a := newAgent(t, agent.Config{Name: "a", Tools: []agent.Tool{tl}, Events: sink,
				Model: llm.NewScripted(llm.React(func(*llm.Request) llm.Step {
					runG = goroutineID()
					return llm.Calls(llm.CallTool("c", "work", map[string]any{}))
				}), llm.Say("ok"))})
			s := a.NewSession()
			_, err := s.Run(ctx, "go")
			if string(runG) != string(toolG) {
				t.Fatalf("the tool ran on goroutine %s, the run on %s", toolG, runG)
			}
			checkOneResultPerCall(t, s.History())
			mu.Lock()
			defer mu.Unlock()
			for i, ev := range evs {
				if ev.Seq != i+1 {
					t.Fatalf("event %d has seq %d", i, ev.Seq)
				}
			}
			if got := len(eventsOf(evs, agent.EventToolProgress)); got != tc.progress {
				t.Fatalf("%d progress events, want %d", got, tc.progress)
			}
			if tc.wantKind == failure.Unknown {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			fails := eventsOf(evs, agent.EventFailure)
			if len(fails) == 0 || fails[0].Failure.Kind != tc.wantKind {
				t.Fatalf("failures = %+v (run err %v)", fails, err)
			}
			if tc.wantKind == failure.Canceled && !errors.Is(err, failure.Canceled) {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

// goroutineID returns the current goroutine's id, from its stack header.
func goroutineID() []byte {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	buf = buf[len("goroutine "):]
	for i, c := range buf {
		if c == ' ' {
			return buf[:i]
		}
	}
	return buf
}
