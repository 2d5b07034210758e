package agent_test

import (
	"context"
	"math"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
)

// countingExporter counts the spans it is given and drops them.
type countingExporter struct{ spans atomic.Int64 }

func (c *countingExporter) ExportSpans(_ context.Context, s []sdktrace.ReadOnlySpan) error {
	c.spans.Add(int64(len(s)))
	return nil
}
func (c *countingExporter) Shutdown(context.Context) error { return nil }

// benchCalls is the number of tool calls of one benchmark run (one per
// turn), as in BenchmarkAgentToolCall.
const benchCalls = 10

// telemetryAgent is BenchmarkAgentToolCall's agent with telemetry tel;
// baseline disables telemetry for good (no provider lookup at all).
func telemetryAgent(b testing.TB, tel agent.Telemetry, baseline bool) *agent.Agent {
	steps := make([]llm.Step, 0, benchCalls+1)
	for range benchCalls {
		steps = append(steps, llm.Calls(llm.CallTool("c", "add", benchArgs)))
	}
	steps = append(steps, llm.Say("3"))
	a, err := agent.New(context.Background(), agent.Config{Model: llm.NewCyclic(steps...), Tools: []agent.Tool{cooperativeTool{benchTool()}},
		Permissions: agent.AllowAll(), Telemetry: tel})
	if err != nil {
		b.Fatal(err)
	}
	if baseline {
		agent.DisableTelemetry(a)
	}
	return a
}

// BenchmarkAgentToolCallTelemetry measures BenchmarkAgentToolCall's loop
// (the cooperative tool, benchCalls calls a run) four ways in the same
// benchmark: "baseline" with telemetry disabled for good (the path before
// telemetry), "aa" a second baseline agent (the A/A check: what the
// measurement makes of no difference at all), "off" with the default
// configuration and otel's no-op global providers, and "sampled" with a
// batch exporter behind a parent-based 10% sampler (exactly one run in ten
// sampled, see tenthIDs).
//
// Each b.Loop iteration is a round: for every variant, a block of
// blockRuns runs of it next to a block of the baseline (schedule: the
// variants' order rotates and the baseline goes first or second in turn),
// so that both blocks of a pair see the same machine. A block is timed in
// the process's CPU time with the collector paused (blockCPU). A ratio is
// the median over the pairs of the variant's block against its baseline
// block, reported with the 25th and 75th percentiles; a first cycle of
// rounds warms up and is discarded. The collector's share of the
// baseline's CPU (collector on), and the allocations and bytes per run of
// each variant, are reported beside: the extra collection a variant causes
// is about that share times its extra bytes.
func BenchmarkAgentToolCallTelemetry(b *testing.B) {
	exp := &countingExporter{}
	tp := samplingProvider(exp)
	defer func() { _ = tp.Shutdown(context.Background()) }()
	names := [...]string{"baseline", "aa", "off", "sampled"}
	agents := [...]*agent.Agent{
		telemetryAgent(b, agent.Telemetry{}, true),
		telemetryAgent(b, agent.Telemetry{}, true),
		telemetryAgent(b, agent.Telemetry{}, false),
		telemetryAgent(b, agent.Telemetry{TracerProvider: tp}, false),
	}
	ctx := context.Background()
	var runs [len(agents)]func()
	var done [len(agents)]int // runs made, to divide by what really ran
	for i, a := range agents {
		runs[i] = func() {
			if _, err := a.Run(ctx, "add 1 and 2 ten times"); err != nil {
				b.Fatal(err)
			}
			done[i]++
		}
	}
	const blockRuns = 2 * sampledEvery // runs of one agent in a row: two sampled
	gcOn := gcOff()
	defer gcOn()
	var cpu time.Duration // the baseline's, over its blocks
	var ratios [len(agents)][]float64
	round := func(r int) {
		for _, p := range schedule(r, len(agents)) {
			var blk [len(agents)]time.Duration
			for _, i := range p {
				blk[i] = blockCPU(blockRuns, runs[i])
			}
			v := p[0] + p[1] // the one that is not the baseline (0)
			cpu += blk[0]
			ratios[v] = append(ratios[v], float64(blk[v])/float64(blk[0]))
		}
	}
	for r := range cycle(len(agents)) { // warm-up
		round(r)
	}
	cpu, ratios, done = 0, [len(agents)][]float64{}, [len(agents)]int{}
	b.ReportAllocs()
	b.ResetTimer()
	for r := 0; b.Loop(); r++ {
		round(r)
	}
	b.StopTimer()
	if l, ok := loadAverage(); ok {
		b.ReportMetric(l, "load1")
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(done[0]*benchCalls), "baseline-cpu-ns/call")
	for i := 1; i < len(agents); i++ {
		b.ReportMetric(quantile(ratios[i], 0.5), names[i]+"-ratio")
		b.ReportMetric(quantile(ratios[i], 0.25), names[i]+"-p25")
		b.ReportMetric(quantile(ratios[i], 0.75), names[i]+"-p75")
	}
	gcOn()
	b.ReportMetric(gcShare(50*blockRuns, runs[0]), "baseline-gc-share")
	for _, i := range []int{0, 2, 3} {
		// blockRuns runs: the sampled variant's share of sampled runs.
		b.ReportMetric(testing.AllocsPerRun(blockRuns, runs[i]), names[i]+"-allocs/run")
		b.ReportMetric(bytesPerRun(blockRuns, runs[i]), names[i]+"-B/run")
	}
}

// TestSampledBenchmarkExports checks the sampled benchmark's setup does what
// it says: the spans of sampled runs reach the exporter (a run is 1 + 2*10 + 1
// spans: invoke_agent, 11 chats and 10 tool calls), exactly one run in ten.
func TestSampledBenchmarkExports(t *testing.T) {
	for _, runs := range []int{1, 10, 11, 25, 400} {
		t.Run(strconv.Itoa(runs), func(t *testing.T) {
			exp := &countingExporter{}
			tp := samplingProvider(exp)
			a := telemetryAgent(t, agent.Telemetry{TracerProvider: tp}, false)
			for range runs {
				if _, err := a.Run(context.Background(), "go"); err != nil {
					t.Fatal(err)
				}
			}
			if err := tp.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			const perRun = 1 + (benchCalls + 1) + benchCalls
			want := int64((runs + sampledEvery - 1) / sampledEvery) // runs 1, 11, 21, ...
			if got := exp.spans.Load(); got != want*perRun {
				t.Fatalf("%d spans exported, want %d runs of %d", got, want, perRun)
			}
		})
	}
}

// TestTenthIDsSampleATenth checks tenthIDs against otel's own ratio
// sampler: exactly the first root of every ten is sampled, and no trace
// or span ID repeats.
func TestTenthIDsSampleATenth(t *testing.T) {
	g := &tenthIDs{}
	sampler := sdktrace.TraceIDRatioBased(1.0 / sampledEvery)
	seen := map[trace.TraceID]bool{}
	spans := map[trace.SpanID]bool{}
	for n := 1; n <= 10_000; n++ {
		tid, sid := g.NewIDs(context.Background())
		child := g.NewSpanID(context.Background(), tid)
		if !tid.IsValid() || !sid.IsValid() || seen[tid] || spans[sid] || spans[child] || sid == child {
			t.Fatalf("root %d: invalid or repeated IDs %s %s %s", n, tid, sid, child)
		}
		seen[tid], spans[sid], spans[child] = true, true, true
		got := sampler.ShouldSample(sdktrace.SamplingParameters{TraceID: tid}).Decision == sdktrace.RecordAndSample
		if want := n%sampledEvery == 1; got != want {
			t.Fatalf("root %d: sampled %v, want %v", n, got, want)
		}
	}
}

// TestSchedule checks the benchmark's interleaving: every round pairs
// each variant with the baseline once; over a cycle each variant takes
// every place in the round equally often and runs before the baseline in
// exactly half of its pairs.
func TestSchedule(t *testing.T) {
	for _, variants := range []int{2, 3, 4, 5} {
		place := map[[2]int]int{} // (variant, place in round) -> count
		first := map[int]int{}    // variant -> pairs where it ran first
		for r := range cycle(variants) {
			pairs := schedule(r, variants)
			if len(pairs) != variants-1 {
				t.Fatalf("%d variants, round %d: %d pairs", variants, r, len(pairs))
			}
			seen := map[int]bool{}
			for k, p := range pairs {
				if (p[0] == 0) == (p[1] == 0) {
					t.Fatalf("%d variants, round %d: pair %v is not (baseline, variant)", variants, r, p)
				}
				v := p[0] + p[1]
				if v < 1 || v >= variants || seen[v] {
					t.Fatalf("%d variants, round %d: pair %v repeats or is out of range", variants, r, p)
				}
				seen[v] = true
				place[[2]int{v, k}]++
				if p[0] == v {
					first[v]++
				}
			}
		}
		for v := 1; v < variants; v++ {
			for k := range variants - 1 {
				if place[[2]int{v, k}] != 2 {
					t.Errorf("%d variants: variant %d at place %d %d times, want 2", variants, v, k, place[[2]int{v, k}])
				}
			}
			if first[v] != variants-1 {
				t.Errorf("%d variants: variant %d first in %d of %d pairs", variants, v, first[v], cycle(variants))
			}
		}
	}
}

// TestQuantile checks the interpolated quantiles the benchmark reports.
func TestQuantile(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		q    float64
		want float64
	}{
		{[]float64{3}, 0.5, 3},
		{[]float64{3, 1, 2}, 0.5, 2},
		{[]float64{4, 1, 3, 2}, 0.5, 2.5},
		{[]float64{4, 1, 3, 2}, 0.25, 1.75},
		{[]float64{4, 1, 3, 2}, 0.75, 3.25},
		{[]float64{5, 1}, 0, 1},
		{[]float64{5, 1}, 1, 5},
	} {
		if got := quantile(tc.xs, tc.q); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("quantile(%v, %v) = %v, want %v", tc.xs, tc.q, got, tc.want)
		}
	}
	if got := quantile(nil, 0.5); !math.IsNaN(got) {
		t.Errorf("quantile(nil) = %v, want NaN", got)
	}
}
