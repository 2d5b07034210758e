package agent

import "github.com/switchboard-dev/switchboard/internal/telemetry"

// DisableTelemetry turns an agent's telemetry off for good (the
// benchmarks' baseline: no provider lookup at all).
func DisableTelemetry(a *Agent) { a.tel = telemetry.Disabled() }
