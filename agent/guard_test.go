package agent

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboard-dev/switchboard/failure"
)

// poolTool counts its calls; it panics when told to.
type poolTool struct{ calls atomic.Int32 }

func (*poolTool) Spec() ToolSpec { return ToolSpec{Name: "pool"} }
func (p *poolTool) Call(_ context.Context, args json.RawMessage) (*Result, error) {
	p.calls.Add(1)
	if string(args) == `"panic"` {
		panic("boom")
	}
	return TextResult(string(args)), nil
}

// runOn runs one call on pool and returns its outcome.
func runOn(pool *guardPool, a *Agent, tool Tool, args string) guardOut {
	g := &guardCall{a: a, ctx: context.Background(), tool: tool, args: json.RawMessage(args), ch: make(chan guardOut, 1)}
	pool.run(g)
	return <-g.ch
}

func (p *guardPool) idleWorkers() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}

// TestGuardPoolReusesWorkers: calls one after another run on one worker,
// which survives a panicking tool and exits once idle for idleFor, not
// before. It runs on synctest's clock: the idle timer is in the bubble, and
// synctest.Test returns only once the worker has exited.
func TestGuardPoolReusesWorkers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const idleFor = 50 * time.Millisecond
		pool := &guardPool{idleFor: idleFor}
		a := &Agent{}
		tl := &poolTool{}
		for i, args := range []string{`1`, `"panic"`, `2`, `3`} {
			o := runOn(pool, a, tl, args)
			if args == `"panic"` {
				if !errors.Is(o.err, failure.Panic) {
					t.Fatalf("call %d: err %v, want a panic failure", i, o.err)
				}
			} else if o.err != nil || o.res.Text() != args {
				t.Fatalf("call %d: %+v", i, o)
			}
			synctest.Wait()
			if n := pool.idleWorkers(); n != 1 {
				t.Fatalf("after call %d: %d idle workers, want the one", i, n)
			}
		}
		time.Sleep(idleFor - time.Millisecond)
		synctest.Wait()
		if n := pool.idleWorkers(); n != 1 {
			t.Fatalf("%d idle workers just before idleFor, want the one", n)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if n := pool.idleWorkers(); n != 0 {
			t.Fatalf("%d idle workers after idleFor, want none", n)
		}
	})
	goleak.VerifyNone(t)
}

// TestGuardPoolUnderRace hands calls to workers that expire almost at once,
// from many goroutines: every call runs exactly once and returns, and no
// worker is left.
func TestGuardPoolUnderRace(t *testing.T) {
	pool := &guardPool{idleFor: time.Microsecond}
	a := &Agent{}
	tl := &poolTool{}
	const callers, each = 16, 200
	var wg sync.WaitGroup
	for range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range each {
				if o := runOn(pool, a, tl, `1`); o.err != nil || o.res.Text() != "1" {
					t.Errorf("call: %+v", o)
					return
				}
				if j%16 == 0 {
					// Jitter of 0-2 µs around the 1 µs idle timeout, on the
					// real clock: the subject is the race between a worker's
					// expiry and a new call, which synctest would serialise.
					time.Sleep(time.Duration(j%3) * time.Microsecond)
				}
			}
		}()
	}
	wg.Wait()
	if got := tl.calls.Load(); got != callers*each {
		t.Fatalf("%d calls ran, want %d", got, callers*each)
	}
	goleak.VerifyNone(t)
	if n := pool.idleWorkers(); n != 0 {
		t.Fatalf("%d idle workers left", n)
	}
}
