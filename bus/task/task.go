// Package task holds the A2A task updates the bus carries on
// <prefix>.a2a.tasks.<task>: the a2a package publishes them (through any
// publisher, such as *bus.Bus) and bus.SubscribeTask reads them. It imports
// nothing else of Switchboard, so that a2a does not link the NATS server.
package task

import (
	"encoding/json"
	"time"
)

// Update is an A2A task's status or artifact update. Data carries the A2A
// event as the peer sent it.
type Update struct {
	Task    string `json:"task"`
	Context string `json:"context,omitempty"`
	// Kind is "status" (a status update) or "artifact" (an artifact
	// update).
	Kind string `json:"kind"`
	// State is the task's state after a status update (A2A names, e.g.
	// "working", "input-required", "completed").
	State string `json:"state,omitempty"`
	// Final marks the task's last update.
	Final   bool            `json:"final,omitempty"`
	Message string          `json:"message,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
	Time    time.Time       `json:"time"`
}
