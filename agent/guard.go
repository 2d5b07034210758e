package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-dev/switchboard/failure"
)

// Every tool call runs on a guard goroutine, whatever the tool promises, so
// that the run can stop waiting for a tool that ignores its cancelled
// context: the run's deadlines hold whatever a tool does.
//
// The guards are pooled workers rather than a goroutine per call: a fresh
// goroutine starts on a small stack and grows it (copying it) on every
// call deep enough, as an MCP call through go-sdk is, which cost several
// times the hand-off itself. An idle worker exits after guardIdle.

// stopGrace is how long a cancelled tool may take to return before the
// agent stops waiting for it and reports it as timed out (Agent.stopGrace,
// which tests shorten).
const stopGrace = 2 * time.Second

// guardIdle is how long an idle guard worker waits for the next call
// before it exits.
const guardIdle = 100 * time.Millisecond

// callTool runs the tool on a guard, recovering a panic, and stops waiting
// for a tool that ignores its cancelled context after stopGrace: the call
// then fails, and its guard, counted in Agent.strays, goes back to the pool
// when the tool returns, its result discarded. While it waits it emits the
// progress arriving on live (a call run on the run's goroutine).
func (r *run) callTool(ctx context.Context, tool Tool, args json.RawMessage, cs *callState) (*Result, error) {
	g := &guardCall{a: r.a, ctx: ctx, tool: tool, args: args, ch: make(chan guardOut, 1), start: time.Now()}
	r.a.guards.run(g)
wait:
	for {
		select {
		case o := <-g.ch:
			return o.res, o.err
		case m := <-cs.live: // nil unless the call runs on the run's goroutine
			cs.emitLive(m)
		case <-ctx.Done():
			break wait
		}
	}
	grace := r.a.stopGrace
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case o := <-g.ch:
		return finishedLate(ctx, o)
	case <-t.C:
	}
	if !g.state.CompareAndSwap(guardRunning, guardAbandoned) {
		return finishedLate(ctx, <-g.ch) // it returned just now
	}
	r.a.strays.Add(1)
	name := tool.Spec().Name
	r.a.log.Warn().Str("tool", name).Str("run", r.id).Dur("grace", grace).
		Msg("tool ignored cancellation; the call is abandoned and its result will be discarded")
	return nil, fmt.Errorf("tool %q ignored cancellation for %s: %w", name, grace, context.Cause(ctx))
}

// finishedLate is the outcome of a call that returned after its context
// was done: a success still counts as cancelled.
func finishedLate(ctx context.Context, o guardOut) (*Result, error) {
	if o.err == nil {
		return nil, context.Cause(ctx)
	}
	return o.res, o.err
}

// guardCall states: the tool is running, it returned, or the agent stopped
// waiting for it.
const (
	guardRunning int32 = iota
	guardReturned
	guardAbandoned
)

// guardCall is one tool call handed to a guard.
type guardCall struct {
	a     *Agent
	ctx   context.Context
	tool  Tool
	args  json.RawMessage
	ch    chan guardOut // buffered: the guard never blocks on it
	state atomic.Int32
	start time.Time
}

type guardOut struct {
	res *Result
	err error
}

// do runs the tool, recovering a panic.
func (g *guardCall) do() (o guardOut) {
	defer func() {
		if v := recover(); v != nil {
			o = guardOut{err: &failure.Error{Kind: failure.Panic, Source: failure.SourceTool, Tool: g.tool.Spec().Name,
				Message: "the tool crashed", Err: panicError(v)}}
		}
	}()
	o.res, o.err = g.tool.Call(g.ctx, g.args)
	return o
}

// returned marks the call returned; if the agent abandoned it meanwhile,
// it accounts for the end of the stray call.
func (g *guardCall) returned() {
	if !g.state.CompareAndSwap(guardRunning, guardReturned) {
		g.a.strays.Add(-1)
		g.a.log.Info().Str("tool", g.tool.Spec().Name).Dur("after", time.Since(g.start)).
			Msg("an abandoned tool call returned; its result is discarded")
	}
}

// guardPool hands calls to idle workers, most recently idle first (its
// stack is the likeliest to be grown and in cache), starting a worker when
// none is idle.
type guardPool struct {
	mu   sync.Mutex
	idle []*guardWorker
	// idleFor is how long a worker idles before it exits (0: guardIdle).
	idleFor time.Duration
}

// guardWorker is a goroutine that runs calls, one at a time.
type guardWorker struct {
	calls chan *guardCall // buffered: handing a call over never blocks
	pool  *guardPool
}

// run starts g on a guard.
func (p *guardPool) run(g *guardCall) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		w.calls <- g
		return
	}
	p.mu.Unlock()
	w := &guardWorker{calls: make(chan *guardCall, 1), pool: p}
	go w.loop(g)
}

// loop runs g, then each call handed over, until it has been idle for
// the pool's idleFor.
func (w *guardWorker) loop(g *guardCall) {
	idleFor := w.pool.idleFor
	if idleFor <= 0 {
		idleFor = guardIdle
	}
	idle := time.NewTimer(idleFor)
	defer idle.Stop()
	for {
		o := g.do()
		g.returned()
		// Back in the pool before the result goes out: the caller, woken
		// by it, runs next, and its next call finds this worker idle.
		w.pool.mu.Lock()
		w.pool.idle = append(w.pool.idle, w)
		w.pool.mu.Unlock()
		idle.Reset(idleFor)
		g.ch <- o // buffered: never blocks, even for an abandoned call
		g = nil   // the call's references go with it
		select {
		case g = <-w.calls:
			continue
		case <-idle.C:
		}
		if !w.pool.remove(w) {
			g = <-w.calls // taken just now: its call is on the way
			continue
		}
		return
	}
}

// remove takes w out of the idle list; false if it is not there (a call
// was just handed to it).
func (p *guardPool) remove(w *guardWorker) bool {
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
