package server

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
)

// Every tool call runs on a worker goroutine, whatever the tool promises,
// so that the call's deadline holds whatever the tool does (guarded). The
// workers are pooled, as an agent's guards are, rather than a goroutine per
// call: a fresh goroutine starts on a small stack and grows it (copying
// it) on every call deep enough, as a call through go-sdk's client is. An
// idle worker exits after workerIdle.

// workerIdle is how long an idle worker waits for the next call before it
// exits.
const workerIdle = 100 * time.Millisecond

// workCall is one tool call handed to a worker.
type workCall struct {
	ctx  context.Context
	tool agent.Tool
	args json.RawMessage
	ch   chan workOut // buffered: the worker never blocks on it
}

type workOut struct {
	r   *agent.Result
	err error
}

// do runs the tool, recovering a panic.
func (c *workCall) do() (o workOut) {
	defer func() {
		if p := recover(); p != nil {
			o = workOut{err: &failure.Error{Kind: failure.Panic, Source: failureSource(c.tool.Spec().Source.Kind),
				Tool: c.tool.Spec().Name, Op: "call", Message: "the tool panicked",
				Err: fmt.Errorf("panic: %v\n%s", p, debug.Stack())}}
		}
	}()
	o.r, o.err = c.tool.Call(c.ctx, c.args)
	return o
}

// workers hands calls to idle workers, most recently idle first (its stack
// is the likeliest to be grown and in cache), starting one when none is
// idle.
type workers struct {
	mu     sync.Mutex
	idle   []*worker
	closed bool
	stop   chan struct{} // closed by close: idle workers exit
}

// worker is a goroutine that runs calls, one at a time.
type worker struct {
	calls chan *workCall // buffered: handing a call over never blocks
	pool  *workers
	stop  <-chan struct{} // the pool's stop
}

// run starts c on a worker.
func (p *workers) run(c *workCall) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 && !p.closed {
		w := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		w.calls <- c
		return
	}
	if p.stop == nil {
		p.stop = make(chan struct{})
	}
	w := &worker{calls: make(chan *workCall, 1), pool: p, stop: p.stop}
	p.mu.Unlock()
	go w.loop(c)
}

// close makes idle workers exit, and busy ones once their call returned;
// calls run after it get a worker each.
func (p *workers) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	if p.stop != nil {
		close(p.stop) // each idle worker leaves the list and exits
	}
}

// loop runs c, then each call handed over, until it has been idle for
// workerIdle. Its timer is not reset at every call (a timer set earlier
// than the netpoller's next wake-up costs a system call to wake it): when
// it fires, a worker used since waits the rest of workerIdle again.
func (w *worker) loop(c *workCall) {
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for c != nil {
		o := c.do()
		// Back in the pool before the result goes out: the caller, woken
		// by it, runs next, and its next call finds this worker idle.
		w.pool.mu.Lock()
		closed := w.pool.closed
		if !closed {
			w.pool.idle = append(w.pool.idle, w)
		}
		w.pool.mu.Unlock()
		since := time.Now()
		c.ch <- o // buffered: never blocks, even for an abandoned call
		if closed {
			return
		}
		c = w.next(idle, since)
	}
}

// next waits for the next call, or returns nil once the worker has been
// idle since since for workerIdle and left the pool.
func (w *worker) next(idle *time.Timer, since time.Time) *workCall {
	for {
		stopped := false
		select {
		case c := <-w.calls:
			return c
		case <-idle.C:
		case <-w.stop:
			stopped = true
		}
		if d := time.Since(since); d < workerIdle && !stopped {
			idle.Reset(workerIdle - d)
			continue
		}
		if !w.pool.remove(w) {
			return <-w.calls // taken just now: its call is on the way
		}
		return nil
	}
}

// remove takes w out of the idle list; false if it is not there (a call
// was just handed to it).
func (p *workers) remove(w *worker) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, x := range p.idle {
		if x == w {
			n := len(p.idle) - 1
			copy(p.idle[i:], p.idle[i+1:])
			p.idle[n] = nil
			p.idle = p.idle[:n]
			return true
		}
	}
	return false
}

// guarded runs tool.Call on a worker, recovering a panic, and returns when
// it returned or stopGrace after ctx ended (the worker goes back to the
// pool when the tool returns; its late result is discarded).
func (s *Server) guarded(ctx context.Context, tool agent.Tool, args json.RawMessage) (*agent.Result, error) {
	c := &workCall{ctx: ctx, tool: tool, args: args, ch: make(chan workOut, 1)}
	s.workers.run(c)
	select {
	case o := <-c.ch:
		return o.r, o.err
	case <-ctx.Done():
	}
	t := time.NewTimer(stopGrace)
	defer t.Stop()
	select {
	case o := <-c.ch:
		return o.r, o.err
	case <-t.C:
		return nil, failure.Wrap(failure.Timeout, failureSource(tool.Spec().Source.Kind),
			fmt.Errorf("the tool %s did not return after its cancellation: %w", tool.Spec().Name, ctx.Err()))
	}
}
