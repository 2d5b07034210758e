package worker_test

import (
	"context"
	"encoding/json"
	"iter"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/worker"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

func TestMain(m *testing.M) {
	if os.Getenv(envWorkerURL) != "" {
		// Re-executed by TestDistributedWorkerKilled: be a worker process.
		os.Exit(workerProcess())
	}
	if os.Getenv(envDurableURL) != "" {
		// Re-executed by TestDurableWorkersKilled.
		if n, _ := strconv.Atoi(os.Getenv(envDurableCaller)); n > 0 {
			os.Exit(durableCallerProcess(n))
		}
		os.Exit(durableWorkerProcess())
	}
	goleak.VerifyTestMain(m)
}

// Test timings: fast heartbeats, so that a lost worker is noticed in
// 400ms, yet slow enough for a loaded 2-core machine running -race.
const (
	testHeartbeat = 100 * time.Millisecond
	testMissed    = 4
)

// newBus starts a bus (an embedded server listening on loopback when cfg
// has no URLs), closed with the test.
func newBus(t testing.TB, cfg bus.Config) *bus.Bus {
	if cfg.Policy == nil {
		cfg.Policy = fastPolicy()
	}
	return testkit.NewBus(t, cfg)
}

// cluster is a host bus that listens, and a way to open more connections
// to it (separate clients, as other processes would be).
type cluster struct {
	t    testing.TB
	host *bus.Bus
}

func newCluster(t testing.TB) *cluster {
	return &cluster{t: t, host: newBus(t, bus.Config{Listen: "127.0.0.1:0"})}
}

func (c *cluster) client(name string) *bus.Bus {
	return newBus(c.t, bus.Config{URLs: []string{c.host.ClientURL()}, Name: name})
}

// serve starts a worker, stopped with the test (before its bus closes).
func serve(t testing.TB, b *bus.Bus, r agent.Runner, cfg worker.ServeConfig) *worker.Server {
	t.Helper()
	srv, err := worker.Serve(context.Background(), b, r, cfg)
	if err != nil {
		t.Fatalf("Serve: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return srv
}

// newPool returns a pool with the test timings.
func newPool(t testing.TB, b *bus.Bus, name string, cfg worker.PoolConfig) *worker.Pool {
	t.Helper()
	if cfg.Heartbeat == 0 {
		cfg.Heartbeat, cfg.MissedHeartbeats = testHeartbeat, testMissed
	}
	if cfg.Policy == nil {
		cfg.Policy = fastPolicy()
	}
	p, err := worker.NewPool(b, name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// probe observes the step agent's tools from the test.
type probe struct {
	// started receives the input of each blocking call as it blocks.
	started chan string
	// ended receives the context error each blocking call ended with.
	ended chan error
	// blockOnce makes only the first blocking call block; later ones
	// return at once (the retry of a lost run).
	blockOnce bool
	blocked   atomic.Int32
}

func newProbe() *probe { return &probe{started: make(chan string, 16), ended: make(chan error, 16)} }

// stepTools are the served agent's tools: work (reports progress), block
// (waits for cancellation), ask (asks the caller a question).
func stepTools(pr *probe) []agent.Tool {
	schema := json.RawMessage(`{"type":"object","properties":{"input":{"type":"string"}}}`)
	arg := func(args json.RawMessage) string {
		var a struct{ Input string }
		_ = json.Unmarshal(args, &a)
		return a.Input
	}
	work := agent.NewFuncTool(agent.ToolSpec{Name: "work", Description: "Does work.", InputSchema: schema},
		func(ctx context.Context, args json.RawMessage) (*agent.Result, error) {
			if c, ok := agent.CallFromContext(ctx); ok {
				c.ReportProgress(agent.Progress{Progress: 1, Total: 2, Message: "working on " + arg(args)})
			}
			return agent.TextResult("worked(" + arg(args) + ")"), nil
		})
	block := agent.NewFuncTool(agent.ToolSpec{Name: "block", Description: "Blocks.", InputSchema: schema},
		func(ctx context.Context, args json.RawMessage) (*agent.Result, error) {
			if pr.blockOnce && pr.blocked.Add(1) > 1 {
				return agent.TextResult("unblocked(" + arg(args) + ")"), nil
			}
			pr.started <- arg(args)
			<-ctx.Done()
			pr.ended <- ctx.Err()
			return nil, ctx.Err()
		})
	ask := agent.NewFuncTool(agent.ToolSpec{Name: "ask", Description: "Asks.", InputSchema: schema},
		func(ctx context.Context, args json.RawMessage) (*agent.Result, error) {
			c, _ := agent.CallFromContext(ctx)
			res, err := c.Elicit(ctx, agent.Elicitation{Kind: agent.ElicitInput, Message: "Which city? (" + arg(args) + ")"})
			if err != nil {
				return nil, err
			}
			if res.Action != agent.ElicitAccept {
				return agent.TextResult("no answer: " + string(res.Action)), nil
			}
			return agent.TextResult("answer: " + res.Content["text"].(string)), nil
		})
	big := agent.NewFuncTool(agent.ToolSpec{Name: "big", Description: "Returns 2 MB.", InputSchema: schema},
		func(context.Context, json.RawMessage) (*agent.Result, error) {
			return agent.TextResult(strings.Repeat("x", 2<<20)), nil
		})
	return []agent.Tool{work, block, ask, big}
}

// body strips a tool result's envelope.
func body(s string) string {
	if i := strings.IndexByte(s, '\n'); strings.HasPrefix(s, "<tool_result") && i >= 0 {
		s = strings.TrimSuffix(s[i+1:], "\n</tool_result>")
	}
	return s
}

// stepModel reads the input "<tool> <arg>": it calls work, block or ask
// with arg and answers "result: <tool result>"; "loop" calls work every
// turn (until the turn budget ends the run); "modelfail" fails as a model;
// anything else is echoed.
func stepModel() llm.Model {
	return llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
		in := lastUser(req)
		tool, arg, _ := strings.Cut(in, " ")
		if res := testkit.LastToolResults(req); len(res) > 0 && tool != "loop" {
			return llm.Say("result: " + firstN(body(res[0].Content), 100))
		}
		switch tool {
		case "work", "block", "ask", "big":
			return llm.Calls(llm.CallTool("c1", tool, map[string]string{"input": arg}))
		case "loop":
			return llm.Calls(llm.CallTool("c1", "work", map[string]string{"input": arg}))
		case "modelfail":
			return llm.Step{Err: &failure.Error{Kind: failure.Model, Source: failure.SourceModel, Name: "scripted", Message: "the model refused"}}
		}
		return llm.Say("echo: " + in)
	}))
}

// newStep builds the served agent ("step"), wrapped to record histories.
func newStep(t testing.TB, pr *probe) *recorder {
	t.Helper()
	a, err := agent.New(context.Background(), agent.Config{Name: "step", Description: "A pipeline step.",
		Model: stepModel(), Tools: stepTools(pr), Permissions: agent.AllowAll(), Elicitor: worker.Elicitor(nil),
		Policy: fastPolicy(), Budget: agent.Budget{MaxTurns: 3}})
	if err != nil {
		t.Fatal(err)
	}
	return &recorder{a: a, runs: make(chan run, 64)}
}

// run is one finished run of a recorder: its history and error.
type run struct {
	hist []llm.Message
	err  error
}

// recorder is a Runner that runs each input in a new session of its agent
// and records the session's history once the run has returned.
type recorder struct {
	a    *agent.Agent
	runs chan run
}

func (r *recorder) Name() string        { return r.a.Name() }
func (r *recorder) Description() string { return r.a.Description() }

func (r *recorder) Stream(ctx context.Context, input string) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		s := r.a.NewSession()
		var last error
		for ev, err := range s.Stream(ctx, input) {
			if err != nil {
				last = err
			}
			if !yield(ev, err) {
				break
			}
		}
		r.runs <- run{hist: s.History(), err: last}
	}
}

// next waits for the recorder's next finished run.
func (r *recorder) next(t testing.TB) run {
	t.Helper()
	select {
	case x := <-r.runs:
		return x
	case <-time.After(10 * time.Second):
		t.Fatal("no run finished on the worker within 10s")
	}
	return run{}
}

// checkClosed asserts the conversation invariant: every tool call of every
// assistant message is answered by exactly one result in the next message.
func checkClosed(t testing.TB, hist []llm.Message) {
	t.Helper()
	calls := 0
	for i, m := range hist {
		if m.Role != llm.RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		calls += len(m.ToolCalls)
		if i+1 >= len(hist) || hist[i+1].Role != llm.RoleTool {
			t.Fatalf("tool calls of message %d have no results", i)
		}
		got := map[string]int{}
		for _, r := range hist[i+1].ToolResults {
			got[r.CallID]++
		}
		for _, c := range m.ToolCalls {
			if got[c.ID] != 1 {
				t.Fatalf("call %s has %d results", c.ID, got[c.ID])
			}
		}
		if len(hist[i+1].ToolResults) != len(m.ToolCalls) {
			t.Fatalf("message %d: %d results for %d calls", i+1, len(hist[i+1].ToolResults), len(m.ToolCalls))
		}
	}
	if calls == 0 {
		t.Fatal("the history has no tool call")
	}
}

// wantKind asserts a typed failure of kind from src.
func wantKind(t testing.TB, err error, kind failure.Kind, src failure.Source) *failure.Error {
	t.Helper()
	return testkit.WantKind(t, err, kind, src)
}

// waitFor polls cond until it holds (10s at most).
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	testkit.WaitFor(t, 10*time.Second, what, cond)
}

// events collects a stream's events and its final error.
func events(seq iter.Seq2[agent.Event, error]) ([]agent.Event, error) {
	var evs []agent.Event
	var last error
	for ev, err := range seq {
		evs = append(evs, ev)
		if err != nil {
			last = err
		}
	}
	return evs, last
}

// types lists event types, nested ones as "nested:<type>".
func types(evs []agent.Event) string {
	var out []string
	for _, ev := range evs {
		if ev.Type == agent.EventNested && ev.Nested != nil {
			out = append(out, "nested:"+string(ev.Nested.Type))
			continue
		}
		out = append(out, string(ev.Type))
	}
	return strings.Join(out, ",")
}

// firstN is s cut at n bytes.
func firstN(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// fastPolicy retries quickly.
func fastPolicy() failure.Policy {
	return testkit.FastPolicy(failure.PolicyConfig{InitialBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
}

var (
	ctxT     = testkit.Ctx
	lastUser = testkit.LastUser
)
