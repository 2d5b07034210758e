package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/llm"
)

// runTask runs the demo's task on the main agent, drawing progress bars
// from the bus, then prints the report and a summary.
func (w *world) runTask(ctx context.Context) error {
	start := time.Now()
	var (
		wg        sync.WaitGroup
		stopBars  context.CancelFunc = func() {}
		runID     string
		runErr    error
		finalSeen bool
		answer    *agent.Answer
	)
	for ev, err := range w.agent.Stream(ctx, task) {
		if err != nil {
			runErr = err
			break
		}
		switch ev.Type {
		case agent.EventRunStarted:
			runID = ev.Run
			var bctx context.Context
			bctx, stopBars = context.WithCancel(ctx)
			wg.Add(1)
			go func() {
				defer wg.Done()
				w.drawProgress(bctx, runID)
			}()
		case agent.EventToolStarted:
			w.tools.Store(ev.Call.ID, ev.Call.Tool)
		case agent.EventToolProgress:
			w.progressMu.Lock()
			w.sent[ev.Call.ID]++
			w.progressMu.Unlock()
		case agent.EventToolFinished:
			// Let the bus deliver the call's progress reports before its
			// result is printed, so the trace reads in order.
			w.awaitProgress(ctx, ev.Call.ID)
		case agent.EventFinal:
			finalSeen, answer = true, ev.Answer
		}
		w.tr.event(ev)
	}
	_ = w.bus.Flush(ctx)
	stopBars()
	wg.Wait()
	if runErr != nil {
		w.tr.say("\n%s %v", w.tr.paint("1;31", "✗ The run failed:"), runErr)
		return exitError(1)
	}
	if !finalSeen {
		return fmt.Errorf("the run ended without an answer")
	}
	if report, err := os.ReadFile(filepath.Join(w.dir, "report.md")); err == nil {
		w.tr.say("\n%s (%d bytes, written through MCP after the permission ask)", w.tr.paint("1", "report.md"), len(report))
		for _, l := range strings.Split(strings.TrimSpace(string(report)), "\n") {
			w.tr.say("  │ %s", l)
		}
	}
	stored := w.countStored(ctx, runID)
	elapsed := time.Since(start).Round(time.Millisecond)
	w.tr.mu.Lock()
	calls, failures, retries, asks := w.tr.calls, w.tr.failures, w.tr.retries, w.tr.asks
	w.tr.mu.Unlock()
	w.tr.say("\n%s %s (MCP, skills, A2A), %s handled, %s retried, %s asked, %s stored on the bus (replayable from JetStream), %s; %s",
		w.tr.paint("1", "Summary:"), plural(calls, "tool call"), plural(failures, "failure"), plural(retries, "transient failure"),
		plural(asks, "permission question"), plural(stored, "run event"), elapsed, w.costLine(answer))
	w.tr.promptBreakdown()
	if w.model == nil {
		w.tr.say("%s every model answer above came from the scripted model (%s).", w.tr.paint("2", "Note:"), "offline, deterministic")
	}
	return nil
}

// drawProgress follows the run's progress subject on the bus (replaying
// from JetStream, so nothing published before the subscription is missed)
// and draws a bar per call.
func (w *world) drawProgress(ctx context.Context, run string) {
	sub, err := w.bus.SubscribeProgress(ctx, run, bus.ProgressOptions{Replay: true})
	if err != nil {
		w.tr.say("  (progress unavailable: %v)", err)
		return
	}
	defer sub.Close()
	for p, err := range sub.All(ctx) {
		if err != nil {
			return
		}
		label := p.Call
		if name, ok := w.tools.Load(p.Call); ok {
			label = name.(string)
		}
		w.tr.progress(p.Call, label, agent.Progress{Progress: p.Progress, Total: p.Total, Message: p.Message})
		w.progressMu.Lock()
		w.drawn[p.Call]++
		w.progressMu.Unlock()
	}
}

// awaitProgress waits, briefly, until the bus has delivered as many
// progress reports of the call as the run produced.
func (w *world) awaitProgress(ctx context.Context, call string) {
	deadline := time.Now().Add(500 * time.Millisecond)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		w.progressMu.Lock()
		done := w.drawn[call] >= w.sent[call]
		w.progressMu.Unlock()
		if done {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// countStored replays the run's events from JetStream and counts them.
func (w *world) countStored(ctx context.Context, run string) int {
	if run == "" {
		return 0
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	n := 0
	for ev, err := range w.bus.Replay(rctx, run) {
		if err != nil {
			break
		}
		n++
		if ev.Type == agent.EventFinal {
			break
		}
	}
	return n
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// costLine says what the main agent's model turns cost (the researcher
// peer's own turns are its own): the answer's usage by class and its
// cost, computed from the agent's price table.
func (w *world) costLine(ans *agent.Answer) string {
	if ans == nil {
		return "cost unknown"
	}
	u := ans.Usage
	line := fmt.Sprintf("%s in (%d cached), %s out (%d reasoning), %s", plural(u.InputTokens, "token"), u.CacheReadTokens,
		plural(u.OutputTokens, "token"), u.ReasoningTokens, costText(ans.Cost))
	if w.model == nil && ans.Cost.Known() {
		line += " (the scripted model's estimated tokens at " + pricedAs + "'s price)"
	}
	return line
}

// costText is "cost $0.0012", "cost at least $0.0012 (1 turn unpriced)"
// or "cost unknown".
func costText(c llm.Cost) string {
	if c.Known() || c.USD != 0 {
		return "cost " + c.String()
	}
	return c.String()
}
