package agent_test

import (
	"context"
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
// (the cooperative tool) three ways, interleaved run by run (in a rotating order) in the
// same benchmark so that they share the machine's conditions: "baseline" with
// telemetry disabled for good (the path before telemetry), "off" with the
// default configuration and otel's no-op global providers, and "sampled"
// with a batch exporter behind a 10% sampler (every span of an unsampled
// run is still started and ended, as non-recording). The ratios are
// off/baseline and sampled/baseline per tool call.
func BenchmarkAgentToolCallTelemetry(b *testing.B) {
	exp := &countingExporter{}
	tp := samplingProvider(exp)
	defer func() { _ = tp.Shutdown(context.Background()) }()
	agents := []*agent.Agent{
		telemetryAgent(b, agent.Telemetry{}, true),
		telemetryAgent(b, agent.Telemetry{}, false),
		telemetryAgent(b, agent.Telemetry{TracerProvider: tp}, false),
	}
	var spent [3]time.Duration
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for round := 0; b.Loop(); round++ {
		// Each round starts with another agent, so that none always runs
		// in the garbage of the same predecessor.
		for k := range agents {
			i := (round + k) % len(agents)
			a := agents[i]
			start := time.Now()
			if _, err := a.Run(ctx, "add 1 and 2 ten times"); err != nil {
				b.Fatal(err)
			}
			spent[i] += time.Since(start)
		}
	}
	b.StopTimer()
	n := float64(b.N * benchCalls)
	per := func(i int) float64 { return float64(spent[i].Nanoseconds()) / n }
	b.ReportMetric(per(0), "baseline-ns/call")
	b.ReportMetric(per(1), "off-ns/call")
	b.ReportMetric(per(2), "sampled-ns/call")
	b.ReportMetric(per(1)/per(0), "off-ratio")
	b.ReportMetric(per(2)/per(0), "sampled-ratio")
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
