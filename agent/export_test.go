package agent

import "time"

// SetStopGrace sets how long a cancelled tool may take to return, for the
// tests of abandoned calls.
func SetStopGrace(a *Agent, d time.Duration) { a.stopGrace = d }

// StrayCalls is the number of abandoned tool calls of a still running.
func StrayCalls(a *Agent) int64 { return a.strays.Load() }

// Names the external tests of this package use.
type EventSinkFunc = eventSinkFunc

// DefaultClassifier is the default permission classifier.
var DefaultClassifier = defaultClassifier

// GuardWorkers is the number of a's guard pool workers, all idle once its
// runs ended; they exit after their idle timeout.
func GuardWorkers(a *Agent) int { return a.guards.idleWorkers() }

// SemanticWeight points at SearchContext's share of the ranking by
// meaning, for the evaluation's sweep.
var SemanticWeight = &semanticWeight
