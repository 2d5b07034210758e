package mcp

import (
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/callhook"
	"github.com/switchboard-dev/switchboard/internal/testkit"
)

// TestLastProgressReachesCall: every progress notification a stdio server
// sends before its result reaches the call, the last ones included,
// although the Manager handles notifications on its queue's goroutine and
// the result arrives on another.
func TestLastProgressReachesCall(t *testing.T) {
	m := newManager(t, quickConfig(testServer("s", "", nil)))
	const steps, calls = 20, 30
	for i := range calls {
		var got atomic.Int64
		ctx, done := callhook.Bind(testkit.Ctx(t, 30*time.Second), callhook.Call{Run: "r", ID: "c", Tool: "mcp__s__slow",
			Progress: func(any) { got.Add(1) }})
		_, err := m.CallTool(ctx, "s", "slow", json.RawMessage(`{"steps":20,"step_ms":0}`))
		done()
		if err != nil {
			t.Fatal(err)
		}
		if n := got.Load(); n != steps {
			t.Fatalf("call %d: %d progress reports reached the call, want %d", i, n, steps)
		}
	}
}
