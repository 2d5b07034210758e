package mcp

import (
	"encoding/json"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/agent"
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
		ctx, done := agent.BindCall(testkit.Ctx(t, 30*time.Second), agent.CallBinding{Run: "r", ID: "c", Tool: "mcp__s__slow",
			Progress: func(agent.Progress) { got.Add(1) }})
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

// TestFlushGivesUp: a flush that times out behind a stuck handler returns
// at its bound and leaves no wait behind (one per call would pile up). It
// runs on synctest's clock: ten flushes of 10 ms take 100 ms exactly.
func TestFlushGivesUp(t *testing.T) { synctest.Test(t, testFlushGivesUp) }

func testFlushGivesUp(t *testing.T) {
	release := make(chan struct{})
	q := newNoteQueue(zerolog.Nop(), func(string, json.RawMessage) { <-release })
	defer q.stop()
	defer close(release)
	for range 2 {
		q.offer(&jsonrpc.Request{Method: methodProgress, Params: json.RawMessage(`{}`)})
	}
	start := time.Now()
	for range 10 {
		q.flush(10 * time.Millisecond)
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Fatalf("ten flushes took %s", d)
	}
	q.mu.Lock()
	n := len(q.flushers)
	q.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d waits left behind", n)
	}
}
