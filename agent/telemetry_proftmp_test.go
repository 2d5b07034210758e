package agent_test

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/switchboard-dev/switchboard/agent"
)

func BenchmarkTmpTelemetryProfile(b *testing.B) {
	for _, tc := range []struct {
		name string
		s    sdktrace.Sampler
	}{{"always", sdktrace.AlwaysSample()}, {"never", sdktrace.ParentBased(sdktrace.NeverSample())}, {"base", nil}} {
		b.Run(tc.name, func(b *testing.B) {
			var a *agent.Agent
			if tc.s == nil {
				a = telemetryAgent(b, agent.Telemetry{}, true)
			} else {
				tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(&countingExporter{}), sdktrace.WithSampler(tc.s))
				defer tp.Shutdown(context.Background())
				a = telemetryAgent(b, agent.Telemetry{TracerProvider: tp}, false)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.Run(context.Background(), "go"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
