package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// shownAttrs are the attributes the span tree prints, in this order.
var shownAttrs = []string{"gen_ai.tool.call.id", "switchboard.tool.source", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "error.type"}

// startTracing installs a global tracer provider for -trace: it exports
// over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set, else keeps the
// spans in memory. The returned function ends tracing: it flushes the
// exporter, or prints the span tree to out.
func startTracing(ctx context.Context, out io.Writer) (func(), error) {
	res := resource.NewSchemaless(attributeServiceName("switchboard-demo"))
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" {
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("the OTLP exporter: %w", err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		prev := otel.GetTracerProvider()
		otel.SetTracerProvider(tp)
		return func() {
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := tp.Shutdown(sctx); err != nil {
				fmt.Fprintln(out, "trace: exporting failed:", err)
			} else {
				fmt.Fprintln(out, "trace: exported to", os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT"))
			}
			otel.SetTracerProvider(prev)
		}, nil
	}
	mem := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(mem), sdktrace.WithResource(res))
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	return func() {
		spans := mem.GetSpans() // before Shutdown, which resets the exporter
		_ = tp.Shutdown(context.Background())
		otel.SetTracerProvider(prev)
		printSpanTree(out, spans)
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

// attributeServiceName is the resource's service.name.
func attributeServiceName(name string) attribute.KeyValue {
	return attribute.String("service.name", name)
}
