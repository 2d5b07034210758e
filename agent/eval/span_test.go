package eval_test

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/switchboard-dev/switchboard/agent/eval"
)

// Each case is a span; the case's trace id is in its result.
func TestCaseSpans(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	rep, err := eval.Run(context.Background(), mustLoad(t, "testdata/weather.yaml"), eval.Config{
		Cassettes: "testdata/cassettes/weather", Agent: agentOf(weatherPrompt, weatherDesc), Tracer: tp})
	if err != nil {
		t.Fatal(err)
	}
	spans := map[string]tracetest.SpanStub{}
	for _, s := range exp.GetSpans() {
		spans[s.Name] = s
	}
	for _, c := range rep.Cases {
		s, ok := spans["eval weather/"+c.Case]
		if !ok {
			t.Fatalf("no span of %s among %d", c.Case, len(spans))
		}
		if s.SpanContext.TraceID().String() != c.TraceID {
			t.Errorf("%s: trace %s, result says %s", c.Case, s.SpanContext.TraceID(), c.TraceID)
		}
		var pass bool
		for _, a := range s.Attributes {
			if a.Key == "eval.pass" {
				pass = a.Value.AsBool()
			}
		}
		if pass != c.Pass {
			t.Errorf("%s: span says pass=%v", c.Case, pass)
		}
	}
}
