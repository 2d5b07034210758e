package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// coopTool is a tool that honours cancellation (as tools once promised) and
// records the goroutine it ran on.
type coopTool struct {
	spec agent.ToolSpec
	fn   func(ctx context.Context) (*agent.Result, error)
	mu   sync.Mutex
	args []json.RawMessage
}

func (c *coopTool) Spec() agent.ToolSpec { return c.spec }
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
		perm      agent.Permission
		wantKind  failure.Kind // of the handled failure; Unknown: the tool ran
		wantCalls int
	}{
		{name: "agent validates its own tools", perm: agent.Allow, wantKind: failure.InvalidArgs},
		{name: "source validates: passed through", source: true, perm: agent.Allow, wantCalls: 1},
		{name: "source validates, but a person is asked", source: true, perm: agent.Ask, wantKind: failure.InvalidArgs},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tl := &coopTool{spec: agent.ToolSpec{Name: "count", Description: "d", InputSchema: schema, Source: provenanceOf(tc.source)},
				fn: func(context.Context) (*agent.Result, error) { return agent.ErrorResult("n must be an integer"), nil }}
			asked := 0
			a := newAgent(t, agent.Config{Name: "a", Tools: []agent.Tool{tl},
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

// TestDetachedSingleCall checks the detached path: in Session.Run the
// progress of a turn's single call reaches the sink in order, as it comes,
// a panic is recovered, and a call that finishes after its cancellation
// counts as cancelled.
func TestDetachedSingleCall(t *testing.T) {
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
			tl := &coopTool{spec: agent.ToolSpec{Name: "work", Description: "d", ReadOnly: true}}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			tl.fn = func(ctx context.Context) (*agent.Result, error) {
				if tc.wantKind == failure.Canceled {
					cancel()
				}
				return tc.fn(ctx)
			}
			a := newAgent(t, agent.Config{Name: "a", Tools: []agent.Tool{tl}, Events: sink,
				Model: llm.NewScripted(llm.Calls(llm.CallTool("c", "work", map[string]any{})), llm.Say("ok"))})
			s := a.NewSession()
			_, err := s.Run(ctx, "go")
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

// TestCooperativeToolIgnoringCancellation: a tool that says it honours
// cancellation (as tools once promised) but does not cannot hold a run past its
// deadlines, in Session.Run as in Stream: the call ends at ToolTimeout
// (plus the grace a cancelled tool gets) with a timeout the model sees, the
// run at MaxDuration with a budget failure; the abandoned call's goroutine
// is counted, and ends when the tool finally returns. Each case runs on
// synctest's clock: the timeouts and the grace pass exactly, so the bounds
// on the run's duration hold however busy the machine.
func TestCooperativeToolIgnoringCancellation(t *testing.T) {
	const grace = 100 * time.Millisecond
	cases := []struct {
		name     string
		stream   bool
		cfg      agent.Config
		deadline time.Duration // from the run's start, before the grace
		wantKind failure.Kind  // of the call's handled failure
		runErr   failure.Kind  // of the run's error; Unknown: none
	}{
		{name: "ToolTimeout, Run", cfg: agent.Config{ToolTimeout: 50 * time.Millisecond},
			deadline: 50 * time.Millisecond, wantKind: failure.Timeout},
		{name: "ToolTimeout, Stream", stream: true, cfg: agent.Config{ToolTimeout: 50 * time.Millisecond},
			deadline: 50 * time.Millisecond, wantKind: failure.Timeout},
		{name: "MaxDuration, Run", cfg: agent.Config{Budget: agent.Budget{MaxDuration: 150 * time.Millisecond}},
			deadline: 150 * time.Millisecond, wantKind: failure.Budget, runErr: failure.Budget},
		{name: "MaxDuration, Stream", stream: true, cfg: agent.Config{Budget: agent.Budget{MaxDuration: 150 * time.Millisecond}},
			deadline: 150 * time.Millisecond, wantKind: failure.Budget, runErr: failure.Budget},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				release := make(chan struct{})
				returned := make(chan struct{})
				liar := &coopTool{spec: agent.ToolSpec{Name: "liar", Description: "d", ReadOnly: true},
					fn: func(context.Context) (*agent.Result, error) {
						defer close(returned)
						<-release // ignores its context
						return agent.TextResult("too late"), nil
					}}
				var mu sync.Mutex
				var fails []failure.Kind
				cfg := tc.cfg
				cfg.Tools = []agent.Tool{liar}
				cfg.Events = agent.EventSinkFunc(func(_ context.Context, ev agent.Event) {
					if ev.Type == agent.EventFailure && ev.Call != nil {
						mu.Lock()
						fails = append(fails, ev.Failure.Kind)
						mu.Unlock()
					}
				})
				cfg.Model = llm.NewScripted(llm.Calls(llm.CallTool("1", "liar", nil)), llm.SummarizeResults("done"))
				a := newAgent(t, cfg)
				agent.SetStopGrace(a, grace)
				s := a.NewSession()

				type result struct {
					err     error
					elapsed time.Duration
				}
				done := make(chan result, 1)
				start := time.Now()
				go func() {
					var err error
					if tc.stream {
						_, err = collect(t, s.Stream(context.Background(), "go"))
					} else {
						_, err = s.Run(context.Background(), "go")
					}
					done <- result{err, time.Since(start)}
				}()
				var res result
				select {
				case res = <-done:
				case <-time.After(tc.deadline + grace + 5*time.Second):
					close(release)
					<-done
					t.Fatal("the run waited for a tool that ignored its cancellation")
				}
				if lo, hi := tc.deadline+grace, tc.deadline+grace+2*time.Second; res.elapsed < lo || res.elapsed > hi {
					t.Errorf("the run took %s, want between %s and %s", res.elapsed, lo, hi)
				}
				if tc.runErr == failure.Unknown && res.err != nil {
					t.Fatalf("run failed: %v", res.err)
				}
				if tc.runErr != failure.Unknown && kindOf(t, res.err) != tc.runErr {
					t.Fatalf("run error %v, want kind %s", res.err, tc.runErr)
				}
				mu.Lock()
				if len(fails) != 1 || fails[0] != tc.wantKind {
					t.Errorf("call failures %v, want [%s]", fails, tc.wantKind)
				}
				mu.Unlock()
				checkOneResultPerCall(t, s.History())
				if r := lastResults(s.History()); len(r) != 1 || !r[0].IsError || strings.Contains(r[0].Content, "too late") {
					t.Errorf("results %+v", r)
				}

				// The abandoned call is accounted for until the tool returns.
				if n := agent.StrayCalls(a); n != 1 {
					t.Fatalf("%d stray calls, want 1", n)
				}
				close(release)
				<-returned
				testkit.WaitFor(t, 10*time.Second, "no stray calls after the tool returned", func() bool { return agent.StrayCalls(a) == 0 })
				if r := lastResults(s.History()); strings.Contains(r[0].Content, "too late") {
					t.Errorf("the late result reached the history: %q", r[0].Content)
				}
				// The bubble ends once its goroutines have.
				testkit.WaitFor(t, 10*time.Second, "the guard pool's workers to exit", func() bool { return agent.GuardWorkers(a) == 0 })
			})
			goleak.VerifyNone(t)
		})
	}
}

// provenanceOf is an MCP server's provenance when the source validates
// arguments, a local tool's otherwise.
func provenanceOf(sourceValidates bool) agent.Provenance {
	if sourceValidates {
		return agent.Provenance{Kind: failure.SourceMCP, Name: "srv", Tool: "count"}
	}
	return agent.Provenance{Kind: failure.SourceTool}
}
