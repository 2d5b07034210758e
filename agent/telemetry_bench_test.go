package agent_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

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
func telemetryAgent(b *testing.B, tel agent.Telemetry, baseline bool) *agent.Agent {
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

// samplingProvider is a tracer provider as production runs one: a batch
// span processor and a parent-based 10% sampler, exporting to exp.
func samplingProvider(exp sdktrace.SpanExporter) *sdktrace.TracerProvider {
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.1))))
}

// BenchmarkAgentToolCallTelemetry measures BenchmarkAgentToolCall's loop
// (the cooperative tool) three ways in the same benchmark: "baseline" with
// telemetry disabled for good (the path before telemetry), "off" with the
// default configuration and otel's no-op global providers, and "sampled"
// with a batch exporter behind a parent-based 10% sampler. The three run
// in alternating blocks of runs (in a rotating order), and each ratio is
// the median over the blocks of that block's off/baseline and
// sampled/baseline time, so that a burst of load on a shared machine
// shifts one block, not the result; the ratios of the process's CPU time
// are reported beside those of wall time. The allocations per run of each
// variant are counted too (testing.AllocsPerRun): they are exact.
func BenchmarkAgentToolCallTelemetry(b *testing.B) {
	exp := &countingExporter{}
	tp := samplingProvider(exp)
	defer func() { _ = tp.Shutdown(context.Background()) }()
	agents := []*agent.Agent{
		telemetryAgent(b, agent.Telemetry{}, true),
		telemetryAgent(b, agent.Telemetry{}, false),
		telemetryAgent(b, agent.Telemetry{TracerProvider: tp}, false),
	}
	ctx := context.Background()
	runOnce := func(a *agent.Agent) {
		if _, err := a.Run(ctx, "add 1 and 2 ten times"); err != nil {
			b.Fatal(err)
		}
	}
	const block = 20 // runs of one agent in a row
	var spent, cpu [3]time.Duration
	var offRatios, sampledRatios, offCPU, sampledCPU []float64
	b.ReportAllocs()
	b.ResetTimer()
	for round := 0; b.Loop(); round++ {
		var blk, blkCPU [3]time.Duration
		for k := range agents {
			i := (round + k) % len(agents)
			start, startCPU := time.Now(), cpuTime()
			for range block {
				runOnce(agents[i])
			}
			blk[i], blkCPU[i] = time.Since(start), cpuTime()-startCPU
			spent[i] += blk[i]
			cpu[i] += blkCPU[i]
		}
		offRatios = append(offRatios, float64(blk[1])/float64(blk[0]))
		sampledRatios = append(sampledRatios, float64(blk[2])/float64(blk[0]))
		offCPU = append(offCPU, float64(blkCPU[1])/float64(blkCPU[0]))
		sampledCPU = append(sampledCPU, float64(blkCPU[2])/float64(blkCPU[0]))
	}
	b.StopTimer()
	n := float64(b.N * block * benchCalls)
	per := func(d [3]time.Duration, i int) float64 { return float64(d[i].Nanoseconds()) / n }
	b.ReportMetric(per(spent, 0), "baseline-ns/call")
	b.ReportMetric(per(spent, 1), "off-ns/call")
	b.ReportMetric(per(spent, 2), "sampled-ns/call")
	b.ReportMetric(median(offRatios), "off-ratio")
	b.ReportMetric(median(sampledRatios), "sampled-ratio")
	// The same from the process's CPU time (robust to other processes'
	// load on a shared machine; it includes the GC and the batch exporter).
	b.ReportMetric(per(cpu, 0), "baseline-cpu-ns/call")
	b.ReportMetric(median(offCPU), "off-cpu-ratio")
	b.ReportMetric(median(sampledCPU), "sampled-cpu-ratio")
	for i, name := range []string{"baseline", "off", "sampled"} {
		b.ReportMetric(testing.AllocsPerRun(20, func() { runOnce(agents[i]) }), name+"-allocs/run")
	}
}

// median is the middle value of xs (the mean of the two middle ones).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// TestSampledBenchmarkExports checks the sampled benchmark's setup does what
// it says: spans of sampled runs reach the exporter (a run is 1 + 2*10 + 1
// spans: invoke_agent, 11 chats and 10 tool calls), about a tenth of the runs.
func TestSampledBenchmarkExports(t *testing.T) {
	exp := &countingExporter{}
	tp := samplingProvider(exp)
	a, err := agent.New(context.Background(), agent.Config{Model: llm.NewCyclic(append(func() []llm.Step {
		s := make([]llm.Step, 0, benchCalls)
		for range benchCalls {
			s = append(s, llm.Calls(llm.CallTool("c", "add", benchArgs)))
		}
		return s
	}(), llm.Say("3"))...), Tools: []agent.Tool{cooperativeTool{benchTool()}}, Permissions: agent.AllowAll(),
		Telemetry: agent.Telemetry{TracerProvider: tp}})
	if err != nil {
		t.Fatal(err)
	}
	const runs = 400
	for range runs {
		if _, err := a.Run(context.Background(), "go"); err != nil {
			t.Fatal(err)
		}
	}
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	const perRun = 1 + (benchCalls + 1) + benchCalls
	got := exp.spans.Load()
	if got%perRun != 0 {
		t.Fatalf("%d spans exported: not whole runs of %d", got, perRun)
	}
	if sampled := got / perRun; sampled < runs/20 || sampled > runs/5 {
		t.Fatalf("%d of %d runs sampled, want about a tenth", sampled, runs)
	}
}
