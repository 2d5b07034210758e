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
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// benchPair is a Manager on a server, and two raw go-sdk sessions on the
// same server: one over go-sdk's own transport (what a go-sdk user gets)
// and one over the Manager's connection (lineConn), which isolates the
// cost of the layers above the connection.
type benchPair struct {
	raw     *gomcp.ClientSession
	rawConn *gomcp.ClientSession
	m       *Manager
	tool    agent.Tool
}

func newBenchPair(b *testing.B, transport string) *benchPair {
	b.Helper()
	ctx := context.Background()
	client := gomcp.NewClient(&gomcp.Implementation{Name: "raw", Version: "1"}, nil)
	var sc ServerConfig
	var rawT, connT gomcp.Transport
	switch transport {
	case "inmemory":
		srv := goServer()
		ct, st := gomcp.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = ss.Close() })
		rawT = ct
		sc = ServerConfig{Name: "bench", Server: srv}
		att, err := (&server{cfg: sc}).pipeToServer(ctx)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(att.cleanup)
		connT = att.t
	case "stdio":
		sc = testServer("bench", "", nil)
		rawT = &gomcp.CommandTransport{Command: exec.Command(testServerPath()), TerminateDuration: time.Second}
		connT = &stdioTransport{cmd: exec.Command(testServerPath()), grace: time.Second, maxFrame: gomcp.DefaultMaxLineLength}
	}
	p := &benchPair{}
	for _, c := range []struct {
		t    gomcp.Transport
		sess **gomcp.ClientSession
	}{{rawT, &p.raw}, {connT, &p.rawConn}} {
		sess, err := client.Connect(ctx, c.t, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = sess.Close() })
		*c.sess = sess
	}
	p.m = newManager(b, quickConfig(sc))
	tools, _ := p.m.Toolset().Tools(ctx)
	for _, t := range tools {
		if t.Spec().Name == "mcp__bench__echo" {
			p.tool = t
		}
	}
	if p.tool == nil {
		b.Fatalf("no echo tool: %+v", p.m.Status())
	}
	return p
}

// rawCall times one go-sdk CallTool of the echo tool on sess.
func rawCall(b *testing.B, sess *gomcp.ClientSession) time.Duration {
	t0 := time.Now()
	if _, err := sess.CallTool(context.Background(), &gomcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"text":"hello"}`)}); err != nil {
		b.Fatal(err)
	}
	return time.Since(t0)
}

// ratios accumulates interleaved timings of several paths and reports one
// path against another: the ratio of the totals, and the median of the
// ratios of chunks of 20 rounds ("-med"), which a burst of load from
// another process skews less, since it hits a chunk of every path alike.
type ratios struct {
	total  []time.Duration
	chunks [][]time.Duration // per chunk of 20 rounds, each path's sum
	rounds int
}

func newRatios(paths int) *ratios { return &ratios{total: make([]time.Duration, paths)} }

// add records one round: one timing per path.
func (r *ratios) add(d ...time.Duration) {
	if r.rounds%20 == 0 {
		r.chunks = append(r.chunks, make([]time.Duration, len(d)))
	}
	r.rounds++
	c := r.chunks[len(r.chunks)-1]
	for i, v := range d {
		r.total[i] += v
		c[i] += v
	}
}

// report reports path i against path base as unit (and unit-med).
func (r *ratios) report(b *testing.B, i, base int, unit string) {
	b.ReportMetric(float64(r.total[i])/float64(r.total[base]), unit)
	var xs []float64
	for _, c := range r.chunks[:r.rounds/20] { // the full chunks
		xs = append(xs, float64(c[i])/float64(c[base]))
	}
	if len(xs) > 0 {
		b.ReportMetric(median(xs), unit+"-med")
	}
}

// mean reports path i's mean time per round as unit.
func (r *ratios) mean(b *testing.B, i int, unit string) {
	b.ReportMetric(float64(r.total[i].Nanoseconds())/float64(r.rounds), unit)
}

// interleave runs each path once per round, b.N rounds, starting each
// round with the next path so that none always runs first (or right after
// the same one), and passes each round's timings, in path order, to
// record.
func interleave(b *testing.B, paths []func() time.Duration, record func(d []time.Duration)) {
	d := make([]time.Duration, len(paths))
	for i := 0; i < b.N; i++ {
		for k := range paths {
			j := (i + k) % len(paths)
			d[j] = paths[j]()
		}
		record(d)
	}
}

// BenchmarkToolCall compares a tool call through the Manager's tool with
// go-sdk's ClientSession.CallTool on the same server, over go-sdk's own
// transport ("manager/raw") and over the Manager's connection
// ("manager/conn": the Manager's own cost), interleaved call by call.
func BenchmarkToolCall(b *testing.B) {
	for _, transport := range []string{"inmemory", "stdio"} {
		b.Run(transport, func(b *testing.B) {
			p := newBenchPair(b, transport)
			ctx := context.Background()
			args := json.RawMessage(`{"text":"hello"}`)
			paths := []func() time.Duration{
				func() time.Duration { return rawCall(b, p.raw) },
				func() time.Duration { return rawCall(b, p.rawConn) },
				func() time.Duration {
					t0 := time.Now()
					if _, err := p.tool.Call(ctx, args); err != nil {
						b.Fatal(err)
					}
					return time.Since(t0)
				},
			}
			for range 50 { // warm up every path
				for _, f := range paths {
					f()
				}
			}
			r := newRatios(len(paths))
			b.ResetTimer()
			interleave(b, paths, func(d []time.Duration) { r.add(d...) })
			b.StopTimer()
			r.mean(b, 0, "raw-ns/call")
			r.mean(b, 2, "manager-ns/call")
			r.report(b, 2, 0, "manager/raw")
			r.report(b, 2, 1, "manager/conn")
			r.report(b, 1, 0, "conn/raw")
		})
	}
}

// BenchmarkAgentToolCall runs one agent turn pair (the scripted model asks
// for the tool, then answers) against raw CallTool calls, interleaved. The
// tool call inside the run is timed from the agent's tool_started event to
// its tool_finished event (the argument check, permission decision,
// failure policy and timeout, then the manager and go-sdk):
//
//   - agent-call/raw: against go-sdk's CallTool over go-sdk's own
//     transport (in-memory pipe or CommandTransport), the figure the
//     project targets (at most 1.05);
//   - agent-call/conn: against go-sdk's CallTool over the Manager's own
//     connection (lineConn), which isolates what the agent and the Manager
//     add above the connection;
//   - conn/raw: the Manager's connection against go-sdk's;
//   - agent/raw: the whole run, model turns and the agent's bookkeeping
//     included.
func BenchmarkAgentToolCall(b *testing.B) {
	for _, transport := range []string{"inmemory", "stdio"} {
		b.Run(transport, func(b *testing.B) {
			p := newBenchPair(b, transport)
			ctx := context.Background()
			var started, path time.Duration
			sink := testkit.EventSinkFunc(func(_ context.Context, ev agent.Event) {
				switch ev.Type {
				case agent.EventToolStarted:
					started = time.Duration(ev.Time.UnixNano())
				case agent.EventToolFinished:
					path = time.Duration(ev.Time.UnixNano()) - started
				}
			})
			model := llm.NewCyclic(llm.Calls(llm.CallTool("c", "mcp__bench__echo", map[string]any{"text": "hello"})), llm.Say("done"))
			a, err := agent.New(ctx, agent.Config{Model: model, Toolsets: []agent.Toolset{p.m.Toolset()}, Events: sink})
			if err != nil {
				b.Fatal(err)
			}
			var run time.Duration
			paths := []func() time.Duration{
				func() time.Duration { return rawCall(b, p.raw) },
				func() time.Duration { return rawCall(b, p.rawConn) },
				func() time.Duration {
					t0 := time.Now()
					if ans, err := a.Run(ctx, "go"); err != nil || ans.ToolCalls != 1 || ans.Failures != 0 {
						b.Fatalf("%+v %v", ans, err)
					}
					run = time.Since(t0)
					return path
				},
			}
			for range 50 { // warm up every path
				for _, f := range paths {
					f()
				}
			}
			r := newRatios(len(paths) + 1) // and the whole run, as path 3
			b.ResetTimer()
			interleave(b, paths, func(d []time.Duration) { r.add(append(d, run)...) })
			b.StopTimer()
			r.mean(b, 0, "raw-ns/call")
			r.mean(b, 2, "agent-call-ns")
			r.report(b, 2, 0, "agent-call/raw")
			r.report(b, 2, 1, "agent-call/conn")
			r.report(b, 1, 0, "conn/raw")
			r.report(b, 3, 0, "agent/raw")
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
			if st.State != stateReady {
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
