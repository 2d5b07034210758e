package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
)

// benchPair is a raw go-sdk session and a Manager on the same server.
type benchPair struct {
	raw  *gomcp.ClientSession
	m    *Manager
	tool agent.Tool
}

func newBenchPair(b *testing.B, transport string) *benchPair {
	b.Helper()
	ctx := context.Background()
	client := gomcp.NewClient(&gomcp.Implementation{Name: "raw", Version: "1"}, nil)
	var sc ServerConfig
	var rawT gomcp.Transport
	switch transport {
	case "inmemory":
		srv := goServer()
		for _, pair := range []*gomcp.Transport{&rawT, &sc.Transport} {
			ct, st := gomcp.NewInMemoryTransports()
			ss, err := srv.Connect(ctx, st, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = ss.Close() })
			*pair = ct
		}
		sc.Name = "bench"
	case "stdio":
		sc = testServer("bench", "", nil)
		rawT = &gomcp.CommandTransport{Command: exec.Command(testServerPath()), TerminateDuration: time.Second}
	}
	raw, err := client.Connect(ctx, rawT, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = raw.Close() })
	m := newManager(b, quickConfig(sc))
	tools, _ := m.Toolset().Tools(ctx)
	p := &benchPair{raw: raw, m: m}
	for _, t := range tools {
		if t.Spec().Name == "mcp__bench__echo" {
			p.tool = t
		}
	}
	if p.tool == nil {
		b.Fatalf("no echo tool: %+v", m.Status())
	}
	return p
}

// BenchmarkToolCall compares a tool call through the Manager's tool (and
// through a whole agent run) with go-sdk's ClientSession.CallTool on the
// same server, interleaving them so both see the same machine load.
func BenchmarkToolCall(b *testing.B) {
	for _, transport := range []string{"inmemory", "stdio"} {
		b.Run(transport, func(b *testing.B) {
			p := newBenchPair(b, transport)
			ctx := context.Background()
			args := json.RawMessage(`{"text":"hello"}`)
			rawCall := func() {
				if _, err := p.raw.CallTool(ctx, &gomcp.CallToolParams{Name: "echo", Arguments: args}); err != nil {
					b.Fatal(err)
				}
			}
			mgrCall := func() {
				if _, err := p.tool.Call(ctx, args); err != nil {
					b.Fatal(err)
				}
			}
			for range 50 { // warm up both paths
				rawCall()
				mgrCall()
			}
			var raw, mgr time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				// Alternate the order so neither path always runs first.
				if i%2 == 0 {
					t0 := time.Now()
					rawCall()
					t1 := time.Now()
					mgrCall()
					raw += t1.Sub(t0)
					mgr += time.Since(t1)
				} else {
					t0 := time.Now()
					mgrCall()
					t1 := time.Now()
					rawCall()
					mgr += t1.Sub(t0)
					raw += time.Since(t1)
				}
			}
			b.StopTimer()
			n := float64(b.N)
			b.ReportMetric(float64(raw.Nanoseconds())/n, "raw-ns/call")
			b.ReportMetric(float64(mgr.Nanoseconds())/n, "manager-ns/call")
			b.ReportMetric(float64(mgr)/float64(raw), "manager/raw")
		})
	}
}

// BenchmarkAgentToolCall runs one agent turn pair (the scripted model asks
// for the tool, then answers) against a raw CallTool, alternated call by
// call. It reports two figures: the whole run (model turns and the agent's
// bookkeeping included: "agent/raw"), and the tool call alone inside the
// run, from the agent's tool_started event to its tool_finished event (the
// argument check, permission decision, failure policy and timeout, then the
// manager and go-sdk: "agent-call/raw"). Each is the mean over the whole
// benchmark and the median of the ratios of chunks of 20 calls ("-med"): a
// burst of load from another process hits a chunk of both paths alike.
func BenchmarkAgentToolCall(b *testing.B) {
	for _, transport := range []string{"inmemory", "stdio"} {
		b.Run(transport, func(b *testing.B) {
			p := newBenchPair(b, transport)
			ctx := context.Background()
			var started, path time.Duration
			sink := agent.EventSinkFunc(func(_ context.Context, ev agent.Event) {
				switch ev.Type {
				case agent.EventToolStarted:
					started = time.Duration(ev.Time.UnixNano())
				case agent.EventToolFinished:
					path += time.Duration(ev.Time.UnixNano()) - started
				}
			})
			model := llm.NewCyclic(llm.Calls(llm.CallTool("c", "mcp__bench__echo", map[string]any{"text": "hello"})), llm.Say("done"))
			a, err := agent.New(ctx, agent.Config{Model: model, Toolsets: []agent.Toolset{p.m.Toolset()}, Events: sink})
			if err != nil {
				b.Fatal(err)
			}
			args := json.RawMessage(`{"text":"hello"}`)
			rawCall := func() time.Duration {
				t0 := time.Now()
				if _, err := p.raw.CallTool(ctx, &gomcp.CallToolParams{Name: "echo", Arguments: args}); err != nil {
					b.Fatal(err)
				}
				return time.Since(t0)
			}
			agentRun := func() time.Duration {
				t0 := time.Now()
				if ans, err := a.Run(ctx, "go"); err != nil || ans.ToolCalls != 1 || ans.Failures != 0 {
					b.Fatalf("%+v %v", ans, err)
				}
				return time.Since(t0)
			}
			for range 50 { // warm up both paths
				rawCall()
				agentRun()
			}
			path = 0
			const chunk = 20
			var raw, run time.Duration
			var cRaw, cRun, cPath time.Duration
			var runRatios, pathRatios []float64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				// Alternate the order so neither path always runs first.
				before := path
				var r, g time.Duration
				if i%2 == 0 {
					r = rawCall()
					g = agentRun()
				} else {
					g = agentRun()
					r = rawCall()
				}
				raw, run = raw+r, run+g
				cRaw, cRun, cPath = cRaw+r, cRun+g, cPath+path-before
				if (i+1)%chunk == 0 {
					runRatios = append(runRatios, float64(cRun)/float64(cRaw))
					pathRatios = append(pathRatios, float64(cPath)/float64(cRaw))
					cRaw, cRun, cPath = 0, 0, 0
				}
			}
			b.StopTimer()
			n := float64(b.N)
			b.ReportMetric(float64(raw.Nanoseconds())/n, "raw-ns/call")
			b.ReportMetric(float64(run.Nanoseconds())/n, "agent-ns/run")
			b.ReportMetric(float64(run)/float64(raw), "agent/raw")
			b.ReportMetric(float64(path.Nanoseconds())/n, "agent-call-ns")
			b.ReportMetric(float64(path)/float64(raw), "agent-call/raw")
			if len(runRatios) > 0 {
				b.ReportMetric(median(runRatios), "agent/raw-med")
				b.ReportMetric(median(pathRatios), "agent-call/raw-med")
			}
		})
	}
}

// median returns the median of xs (which it sorts).
func median(xs []float64) float64 {
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// BenchmarkConnect20 connects 20 stdio servers that take 10ms to 200ms to
// start, concurrently, against connecting the slowest one alone.
func BenchmarkConnect20(b *testing.B) {
	servers := make([]ServerConfig, 20)
	for i := range servers {
		servers[i] = testServer(fmt.Sprintf("s%02d", i), "slowstart", map[string]string{"TESTSERVER_DELAY": fmt.Sprintf("%dms", 10*(i+1))})
	}
	connect := func(scs ...ServerConfig) time.Duration {
		cfg := quickConfig(scs...)
		cfg.MaxConcurrentConnects = len(scs)
		t0 := time.Now()
		m, err := New(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		d := time.Since(t0)
		for _, st := range m.Status() {
			if st.State != StateReady {
				b.Fatalf("%+v", st)
			}
		}
		_ = m.Close()
		return d
	}
	var all, slowest time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		slowest += connect(servers[len(servers)-1])
		all += connect(servers...)
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(slowest.Milliseconds())/n, "slowest-alone-ms")
	b.ReportMetric(float64(all.Milliseconds())/n, "all-20-ms")
	b.ReportMetric(float64(all)/float64(slowest), "all/slowest")
}
