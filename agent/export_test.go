package agent

import "time"

// SetStopGrace sets how long a cancelled tool may take to return, for the
// tests of abandoned calls; the returned function restores it. Tests that
// use it must not run in parallel.
func SetStopGrace(d time.Duration) (restore func()) {
	old := stopGrace
	stopGrace = d
	return func() { stopGrace = old }
}

// StrayCalls is the number of abandoned tool calls of a still running.
func StrayCalls(a *Agent) int64 { return a.strays.Load() }
