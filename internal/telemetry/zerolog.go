package telemetry

import (
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace"
)

// LogHook adds trace_id and span_id to a zerolog line logged with a context
// (Event.Ctx or Logger.With().Ctx) that carries a valid span context.
type LogHook struct{}

// Run implements zerolog.Hook.
func (LogHook) Run(e *zerolog.Event, _ zerolog.Level, _ string) {
	ctx := e.GetCtx()
	if ctx == nil {
		return
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		e.Str("trace_id", sc.TraceID().String()).Str("span_id", sc.SpanID().String())
	}
}
