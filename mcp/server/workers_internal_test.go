package server

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
)

// goroutineLine is the first line of the calling goroutine's stack
// ("goroutine N [running]:"), which names it.
func goroutineLine() string {
	b := make([]byte, 64)
	b = b[:runtime.Stack(b, false)]
	line, _, _ := bytes.Cut(b, []byte("\n"))
	return string(line)
}

// TestWorkersReuseAndClose: calls made one after another run on the same
// worker; a panic is a Panic failure and the worker goes on; after close
// the idle worker leaves the pool and a call still runs.
func TestWorkersReuseAndClose(t *testing.T) {
	s := &Server{}
	var ran []string
	tool := agent.NewFuncTool(agent.ToolSpec{Name: "where"}, func(_ context.Context, args json.RawMessage) (*agent.Result, error) {
		if string(args) == `"panic"` {
			panic("kaboom")
		}
		ran = append(ran, goroutineLine())
		return agent.TextResult("ok"), nil
	})
	ctx := context.Background()
	for _, args := range []string{`{}`, `"panic"`, `{}`, `{}`} {
		_, err := s.guarded(ctx, tool, json.RawMessage(args))
		if (args == `"panic"`) != (err != nil) {
			t.Fatalf("%s: %v", args, err)
		}
		if err != nil && failure.From(err).Kind != failure.Panic {
			t.Errorf("a panicking tool failed with %v, want a Panic failure", err)
		}
	}
	if len(ran) != 3 || ran[0] != ran[1] || ran[1] != ran[2] {
		t.Errorf("calls ran on %q, want one worker", ran)
	}
	s.workers.close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		s.workers.mu.Lock()
		n := len(s.workers.idle)
		s.workers.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d idle workers left after close", n)
		}
	}
	if _, err := s.guarded(ctx, tool, json.RawMessage(`{}`)); err != nil {
		t.Fatalf("a call after close: %v", err)
	}
}
