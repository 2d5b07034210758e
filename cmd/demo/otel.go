package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-dev/switchboard/agent/otelenv"
)

// shownAttrs are the attributes the span tree prints, in this order.
var shownAttrs = []string{"gen_ai.tool.call.id", "switchboard.tool.source", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "error.type"}

// startTelemetry sets OpenTelemetry up for the demo. When the OTEL_*
// environment turns traces or metrics on (OTEL_EXPORTER_OTLP_ENDPOINT, a
// per-signal endpoint, OTEL_TRACES_EXPORTER, …) they are exported as any
// service's are (agent/otelenv); otherwise -trace keeps the
// spans in memory and prints their tree. The returned function ends
// telemetry: it flushes the exporters and reports a failed export as an
// error, or prints the span tree to out.
func startTelemetry(ctx context.Context, out io.Writer, tree bool) (func() error, error) {
	if tr, me := otelenv.Enabled(); tr || me {
		setup, err := otelenv.Start(ctx, otelenv.Config{Service: "switchboard-demo"})
		if err != nil {
			return nil, err
		}
		return func() error {
			if err := setup.Close(); err != nil {
				fmt.Fprintln(out, "telemetry: exporting failed:", err)
				return err
			}
			fmt.Fprintf(out, "telemetry: exported (traces %v, metrics %v)\n", setup.Traces(), setup.Metrics())
			return nil
		}, nil
	}
	if !tree {
		return func() error { return nil }, nil
	}
	res := resource.NewSchemaless(attribute.String("service.name", "switchboard-demo"))
	mem := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(mem), sdktrace.WithResource(res))
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	return func() error {
		spans := mem.GetSpans() // before Shutdown, which resets the exporter
		_ = tp.Shutdown(context.Background())
		otel.SetTracerProvider(prev)
		printSpanTree(out, spans)
		return nil
	}, nil
}

// printSpanTree prints spans as one tree per trace, children in start
// order, with durations and a few attributes.
func printSpanTree(out io.Writer, spans tracetest.SpanStubs) {
	kids := map[trace.SpanID][]tracetest.SpanStub{}
	ids := map[trace.SpanID]bool{}
	for _, s := range spans {
		ids[s.SpanContext.SpanID()] = true
	}
	var roots []tracetest.SpanStub
	for _, s := range spans {
		if p := s.Parent.SpanID(); s.Parent.IsValid() && ids[p] {
			kids[p] = append(kids[p], s)
		} else {
			roots = append(roots, s)
		}
	}
	byStart := func(l []tracetest.SpanStub) {
		slices.SortStableFunc(l, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
	}
	var walk func(s tracetest.SpanStub, depth int)
	walk = func(s tracetest.SpanStub, depth int) {
		var extra []string
		for _, k := range shownAttrs {
			for _, kv := range s.Attributes {
				if string(kv.Key) == k {
					extra = append(extra, k+"="+kv.Value.Emit())
				}
			}
		}
		for _, e := range s.Events {
			extra = append(extra, "event:"+e.Name)
		}
		fmt.Fprintf(out, "%s%s  %s  %s\n", strings.Repeat("  ", depth), s.Name,
			s.EndTime.Sub(s.StartTime).Round(time.Microsecond), strings.Join(extra, " "))
		l := kids[s.SpanContext.SpanID()]
		byStart(l)
		for _, k := range l {
			walk(k, depth+1)
		}
	}
	byStart(roots)
	fmt.Fprintf(out, "\n■ Trace (%d spans)\n", len(spans))
	for _, r := range roots {
		fmt.Fprintf(out, "trace %s\n", r.SpanContext.TraceID())
		walk(r, 1)
	}
}
