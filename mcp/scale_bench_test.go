package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// The scale benchmark's shape.
const (
	scaleRuns   = 1000 // runs at once
	scaleCalls  = 3    // tool calls per run (one per model turn), then an answer
	scaleSingle = 200  // runs alone, one after another, for the single-run figures
)

// Inputs of the scale benchmark's runs; the scripted model reads the input
// to decide each turn (its script position is shared by all runs, so it
// cannot play a per-run script).
const (
	inputCalls     = "calls"      // scaleCalls echo calls, then "done"
	inputParkTool  = "park-tool"  // one park call (blocks at the server until released), then "done"
	inputParkModel = "park-model" // one echo call, then a model turn that blocks until released, then "done"
)

// scaleRec is one run's measurements. It travels in the run's context:
// the agent hands that context (without its cancellation) to the event sink
// and to the tool, so each run records into its own struct and the
// measurement adds no lock shared between runs. A run's events are emitted
// on its goroutine, and its single tool call per turn reports inner before
// the agent gets the result, so a run's fields are only touched in order.
type scaleRec struct {
	started time.Time
	inner   time.Duration   // the current call's time inside the MCP tool's Call
	path    []time.Duration // per call: tool_started → tool_finished
	mcp     []time.Duration // per call: inside the MCP tool's Call (Manager + go-sdk round trip + server)
}

type scaleRecKey struct{}

func recOf(ctx context.Context) *scaleRec {
	r, _ := ctx.Value(scaleRecKey{}).(*scaleRec)
	return r
}

// scaleSink records each call's tool_started → tool_finished time.
var scaleSink = testkit.EventSinkFunc(func(ctx context.Context, ev agent.Event) {
	rec := recOf(ctx)
	if rec == nil {
		return
	}
	switch ev.Type {
	case agent.EventToolStarted:
		rec.started = ev.Time
	case agent.EventToolFinished:
		rec.path = append(rec.path, ev.Time.Sub(rec.started))
		rec.mcp = append(rec.mcp, rec.inner)
	}
})

// timedToolset is the Manager's toolset with each tool's Call timed into
// the run's scaleRec. It still lists the Manager's toolset every turn (so
// that cost stays in the runs) and forwards its change notifications.
type timedToolset struct {
	agent.Toolset
	tools []agent.Tool
}

func newTimedToolset(ctx context.Context, ts agent.Toolset) (*timedToolset, error) {
	tools, err := ts.Tools(ctx)
	if err != nil {
		return nil, err
	}
	t := &timedToolset{Toolset: ts}
	for _, tl := range tools {
		t.tools = append(t.tools, timedTool{tl})
	}
	return t, nil
}

func (t *timedToolset) Tools(ctx context.Context) ([]agent.Tool, error) {
	if _, err := t.Toolset.Tools(ctx); err != nil {
		return nil, err
	}
	return t.tools, nil
}

func (t *timedToolset) Changed() <-chan struct{} {
	return t.Toolset.(interface{ Changed() <-chan struct{} }).Changed()
}

type timedTool struct{ agent.Tool }

// Call records how long the wrapped MCP tool's call took. The agent runs
// every call on a guard goroutine of its own, the wrapper's as the MCP
// tool's, so wrapping changes nothing but the timing recorded.
func (t timedTool) Call(ctx context.Context, args json.RawMessage) (*agent.Result, error) {
	t0 := time.Now()
	res, err := t.Tool.Call(ctx, args)
	if rec := recOf(ctx); rec != nil {
		rec.inner = time.Since(t0)
	}
	return res, err
}

// scaleGate holds parked calls and model turns until it is released.
type scaleGate struct {
	ch     atomic.Pointer[chan struct{}]
	parked atomic.Int64
}

func (g *scaleGate) arm() {
	ch := make(chan struct{})
	g.ch.Store(&ch)
	g.parked.Store(0)
}

func (g *scaleGate) wait(ctx context.Context) error {
	g.parked.Add(1)
	select {
	case <-*g.ch.Load():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *scaleGate) release() { close(*g.ch.Load()) }

// scaleServer is the in-process go-sdk server: echo answers at once; park
// answers once the gate is released.
func scaleServer(g *scaleGate) *gomcp.Server {
	s := gomcp.NewServer(&gomcp.Implementation{Name: "scale", Version: "1.0.0"}, nil)
	ro := &gomcp.ToolAnnotations{ReadOnlyHint: true}
	gomcp.AddTool(s, &gomcp.Tool{Name: "echo", Description: "Echo text.", Annotations: ro},
		func(ctx context.Context, req *gomcp.CallToolRequest, in echoArgs) (*gomcp.CallToolResult, any, error) {
			return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: in.Text}}}, nil, nil
		})
	gomcp.AddTool(s, &gomcp.Tool{Name: "park", Description: "Wait until released.", Annotations: ro},
		func(ctx context.Context, req *gomcp.CallToolRequest, in struct{}) (*gomcp.CallToolResult, any, error) {
			if err := g.wait(ctx); err != nil {
				return nil, nil, err
			}
			return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: "released"}}}, nil, nil
		})
	return s
}

// scaleModel plays each run's script from its input and the tool results
// so far.
func scaleModel(g *scaleGate) *llm.Scripted {
	echo := llm.Calls(llm.CallTool("c", "mcp__scale__echo", map[string]any{"text": "hello"}))
	return llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
		results := 0
		for _, m := range req.Messages {
			if m.Role == llm.RoleTool {
				results++
			}
		}
		switch req.Messages[0].Text {
		case inputCalls:
			if results < scaleCalls {
				return echo
			}
		case inputParkTool:
			if results == 0 {
				return llm.Calls(llm.CallTool("c", "mcp__scale__park", nil))
			}
		case inputParkModel:
			if results == 0 {
				return echo
			}
			_ = g.wait(context.Background()) // released by the benchmark
		}
		return llm.Say("done")
	}))
}

// pct returns the q-th percentile (0 < q ≤ 100, nearest rank) of sorted d.
func pct(d []time.Duration, q int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	i := (len(d)*q + 99) / 100
	return d[max(i, 1)-1]
}

func mean(d []time.Duration) time.Duration {
	var s time.Duration
	for _, v := range d {
		s += v
	}
	return s / time.Duration(max(len(d), 1))
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// BenchmarkScale1000 measures one process at scale: one in-process go-sdk
// server, one Manager, one Agent with the scripted model, and 1,000
// concurrent agent.Run calls, each making three echo tool calls (one per
// model turn) and then answering. In the same iteration it measures the
// same runs one at a time (the single-run baseline), raw go-sdk CallTool
// on the same server alone and from 1,000 goroutines, and the memory of
// 1,000 idle runs. Metrics:
//
//   - runs/s: concurrent runs completed per second of wall time;
//     single-runs/s the same for runs one after another.
//   - call-*: a tool call's latency inside a run, from the agent's
//     tool_started event to its tool_finished event; "single" is a run
//     alone, "1000" with 1,000 runs at once.
//   - mcp-*: the part of each call spent inside the MCP tool's Call (the
//     Manager, go-sdk's client, the in-memory pipe and the server).
//   - added-*: per call, call minus mcp: what the agent loop adds around
//     the MCP call (argument check, permission, failure policy, timeout,
//     guard goroutine, events), including any scheduling wait.
//   - raw-*: go-sdk ClientSession.CallTool on its own session to the same
//     server, alone and from 1,000 goroutines making three calls each.
//   - cost-ratio: wall time per tool call with 1,000 runs at once divided
//     by wall time per tool call with runs one at a time (whole runs:
//     three calls and four scripted turns each). Below 1, 1,000 runs at
//     once get more done per second than runs one at a time (they use
//     every core and overlap the hand-off waits a lone run sits through);
//     above 1, contention costs more than that gains.
//   - p99-ratio: call-p99-1000 / call-p99-single.
//   - idle-tool-KB/run, idle-model-KB/run: the heap in use plus goroutine
//     stacks (after a GC) per idle run, for 1,000 runs blocked in a tool
//     call the server holds (agent + Manager + go-sdk client and server
//     state), and for 1,000 runs blocked in their model's second turn
//     after one tool call (the agent's own state while a model thinks);
//     goroutines/idle-* count the goroutines per idle run likewise.
func BenchmarkScale1000(b *testing.B) {
	ctx := context.Background()
	gate := &scaleGate{}
	srv := scaleServer(gate)
	connect := func() gomcp.Transport {
		ct, st := gomcp.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = ss.Close() })
		return ct
	}
	raw, err := gomcp.NewClient(&gomcp.Implementation{Name: "raw", Version: "1"}, nil).Connect(ctx, connect(), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = raw.Close() })
	m := newManager(b, quickConfig(ServerConfig{Name: "scale", Transport: connect()}))
	ts, err := newTimedToolset(ctx, m.Toolset())
	if err != nil {
		b.Fatal(err)
	}
	a, err := agent.New(ctx, agent.Config{Model: scaleModel(gate), Toolsets: []agent.Toolset{ts}, Events: scaleSink})
	if err != nil {
		b.Fatal(err)
	}

	// run is one agent run recording into rec.
	run := func(rec *scaleRec, input string, calls int) error {
		ans, err := a.Run(context.WithValue(ctx, scaleRecKey{}, rec), input)
		if err != nil {
			return err
		}
		if ans.ToolCalls != calls || ans.Failures != 0 || ans.Text != "done" {
			return fmt.Errorf("run %s: %d calls, %d failures, answer %q", ans.Run, ans.ToolCalls, ans.Failures, ans.Text)
		}
		return nil
	}
	rawArgs := json.RawMessage(`{"text":"hello"}`)
	rawCall := func() (time.Duration, error) {
		t0 := time.Now()
		res, err := raw.CallTool(ctx, &gomcp.CallToolParams{Name: "echo", Arguments: rawArgs})
		if err == nil && res.IsError {
			err = fmt.Errorf("raw call: tool error")
		}
		return time.Since(t0), err
	}
	newRec := func() *scaleRec {
		return &scaleRec{path: make([]time.Duration, 0, scaleCalls), mcp: make([]time.Duration, 0, scaleCalls)}
	}
	// concurrently starts n goroutines running f together and returns the
	// wall time from their release until the last one finished.
	concurrently := func(n int, f func(i int) error) time.Duration {
		errs := make([]error, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				<-start
				errs[i] = f(i)
			})
		}
		t0 := time.Now()
		close(start)
		wg.Wait()
		d := time.Since(t0)
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
		return d
	}
	// idle parks scaleRuns runs with input and returns the heap and stack
	// bytes and the goroutines they hold while parked.
	idle := func(input string, calls int) (bytes, goroutines float64) {
		gate.arm()
		released := false
		defer func() { // on b.Fatal, do not leave the parked runs behind
			if !released {
				gate.release()
			}
		}()
		errs := make([]error, scaleRuns)
		var wg sync.WaitGroup
		var before, after runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&before)
		g0 := runtime.NumGoroutine()
		for i := range scaleRuns {
			wg.Go(func() { errs[i] = run(nil, input, calls) })
		}
		testkit.WaitFor(b, 60*time.Second, fmt.Sprintf("%s: all %d runs to park", input, scaleRuns), func() bool { return gate.parked.Load() >= scaleRuns })
		// Each run counts itself parked just before it blocks: no event
		// says it has; a short pause for the memory reading only.
		time.Sleep(20 * time.Millisecond)
		runtime.GC()
		runtime.ReadMemStats(&after)
		g1 := runtime.NumGoroutine()
		gate.release()
		released = true
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
		perRun := func(a, b uint64) float64 { return (float64(a) - float64(b)) / scaleRuns }
		b.Logf("%s: per idle run %.1f KB heap in use (%.1f KB live), %.1f KB stacks, %.2f goroutines", input,
			perRun(after.HeapInuse, before.HeapInuse)/1024, perRun(after.HeapAlloc, before.HeapAlloc)/1024,
			perRun(after.StackInuse, before.StackInuse)/1024, float64(g1-g0)/scaleRuns)
		return perRun(after.HeapInuse+after.StackInuse, before.HeapInuse+before.StackInuse), float64(g1-g0) / scaleRuns
	}

	for range 20 { // warm up: schema compilation, breakers, first stacks
		if err := run(newRec(), inputCalls, scaleCalls); err != nil {
			b.Fatal(err)
		}
		if _, err := rawCall(); err != nil {
			b.Fatal(err)
		}
	}

	var (
		singlePath, singleMCP, singleAdded, singleRaw []time.Duration
		concPath, concMCP, concAdded, concRaw         []time.Duration
		singleWall, concWall                          time.Duration
		idleTool, idleModel, gTool, gModel            float64
		iters                                         int
	)
	collect := func(recs []*scaleRec, path, inner, added *[]time.Duration) {
		for _, r := range recs {
			if len(r.path) != scaleCalls || len(r.mcp) != scaleCalls {
				b.Fatalf("a run recorded %d calls and %d MCP calls, want %d", len(r.path), len(r.mcp), scaleCalls)
			}
			*path = append(*path, r.path...)
			*inner = append(*inner, r.mcp...)
			for i := range r.path {
				*added = append(*added, r.path[i]-r.mcp[i])
			}
		}
	}
	for b.Loop() {
		iters++
		// Runs one at a time, and raw calls one at a time; then 1,000 runs
		// at once, and 1,000 raw callers at once. The order alternates
		// across iterations.
		recs := make([]*scaleRec, scaleSingle)
		singleRuns := func() {
			t0 := time.Now()
			for i := range recs {
				recs[i] = newRec()
				if err := run(recs[i], inputCalls, scaleCalls); err != nil {
					b.Fatal(err)
				}
			}
			singleWall += time.Since(t0)
			collect(recs, &singlePath, &singleMCP, &singleAdded)
		}
		singleRaws := func() {
			for range scaleSingle * scaleCalls {
				d, err := rawCall()
				if err != nil {
					b.Fatal(err)
				}
				singleRaw = append(singleRaw, d)
			}
		}
		concRecs := make([]*scaleRec, scaleRuns)
		for i := range concRecs {
			concRecs[i] = newRec()
		}
		concRuns := func() {
			concWall += concurrently(scaleRuns, func(i int) error { return run(concRecs[i], inputCalls, scaleCalls) })
			collect(concRecs, &concPath, &concMCP, &concAdded)
		}
		concRaws := func() {
			lat := make([][scaleCalls]time.Duration, scaleRuns)
			concurrently(scaleRuns, func(i int) error {
				for j := range scaleCalls {
					d, err := rawCall()
					if err != nil {
						return err
					}
					lat[i][j] = d
				}
				return nil
			})
			for _, l := range lat {
				concRaw = append(concRaw, l[:]...)
			}
		}
		if iters%2 == 1 {
			singleRuns()
			singleRaws()
			concRuns()
			concRaws()
		} else {
			concRaws()
			concRuns()
			singleRaws()
			singleRuns()
		}

		// Idle runs.
		v, g := idle(inputParkTool, 1)
		idleTool += v
		gTool += g
		v, g = idle(inputParkModel, 1)
		idleModel += v
		gModel += g
	}

	for _, d := range [][]time.Duration{singlePath, singleMCP, singleAdded, singleRaw, concPath, concMCP, concAdded, concRaw} {
		slices.Sort(d)
	}
	n := float64(iters)
	singleRate := float64(len(singlePath)/scaleCalls) / singleWall.Seconds()
	concRate := float64(len(concPath)/scaleCalls) / concWall.Seconds()
	b.ReportMetric(concRate, "runs/s")
	b.ReportMetric(singleRate, "single-runs/s")
	b.ReportMetric(us(pct(singlePath, 50)), "call-p50-single-us")
	b.ReportMetric(us(pct(singlePath, 99)), "call-p99-single-us")
	b.ReportMetric(us(pct(concPath, 50)), "call-p50-1000-us")
	b.ReportMetric(us(pct(concPath, 99)), "call-p99-1000-us")
	b.ReportMetric(us(pct(singleMCP, 50)), "mcp-p50-single-us")
	b.ReportMetric(us(pct(singleMCP, 99)), "mcp-p99-single-us")
	b.ReportMetric(us(pct(concMCP, 50)), "mcp-p50-1000-us")
	b.ReportMetric(us(pct(concMCP, 99)), "mcp-p99-1000-us")
	b.ReportMetric(us(pct(singleAdded, 50)), "added-p50-single-us")
	b.ReportMetric(us(pct(singleAdded, 99)), "added-p99-single-us")
	b.ReportMetric(us(pct(concAdded, 50)), "added-p50-1000-us")
	b.ReportMetric(us(pct(concAdded, 99)), "added-p99-1000-us")
	b.ReportMetric(us(pct(singleRaw, 50)), "raw-p50-single-us")
	b.ReportMetric(us(pct(singleRaw, 99)), "raw-p99-single-us")
	b.ReportMetric(us(pct(concRaw, 50)), "raw-p50-1000-us")
	b.ReportMetric(us(pct(concRaw, 99)), "raw-p99-1000-us")
	b.ReportMetric(us(mean(concPath)), "call-mean-1000-us")
	b.ReportMetric(us(mean(singlePath)), "call-mean-single-us")
	b.ReportMetric(singleRate/concRate, "cost-ratio")
	b.ReportMetric(float64(pct(concPath, 99))/float64(pct(singlePath, 99)), "p99-ratio")
	b.ReportMetric(idleTool/n/1024, "idle-tool-KB/run")
	b.ReportMetric(idleModel/n/1024, "idle-model-KB/run")
	b.ReportMetric(gTool/n, "goroutines/idle-tool-run")
	b.ReportMetric(gModel/n, "goroutines/idle-model-run")
}
