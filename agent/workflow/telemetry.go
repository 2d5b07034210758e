package workflow

import (
	"context"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/telemetry"
)

// inheritedTelemetry is the telemetry of the first runner that has a
// configuration (an agent, or a workflow of them); zero means the global
// providers.
func inheritedTelemetry(runners []agent.Runner) agent.Telemetry {
	type hasTelemetry interface{ Telemetry() agent.Telemetry }
	for _, r := range runners {
		if ht, ok := r.(hasTelemetry); ok {
			if c := ht.Telemetry(); c.TracerProvider != nil || c.MeterProvider != nil {
				return c
			}
		}
	}
	return agent.Telemetry{}
}

// Telemetry is the telemetry configuration the workflow inherited from its
// steps, so that workflows of workflows inherit it too.
func (b *base) Telemetry() agent.Telemetry { return b.telCfg }

// traceStart opens the run's invoke_workflow span: with the caller's
// telemetry when the context carries one, else the steps'.
func (w *wrun) traceStart() {
	t := telemetry.Carried(w.ctx)
	if t == nil {
		t = w.b.tel.Get()
	}
	if t == nil {
		return
	}
	w.ctx, w.op = t.StartWorkflow(telemetry.With(w.ctx, t), w.b.name, w.id)
}

// traceEnd closes the run's span.
func (w *wrun) traceEnd(err error) {
	if w.op == nil {
		return
	}
	kind := ""
	if err != nil {
		kind = failure.From(err).Kind.String()
	}
	w.op.End(context.WithoutCancel(w.ctx), kind)
}
