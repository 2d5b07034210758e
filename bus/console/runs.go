package console

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// startTimeout bounds the wait for a started run's first event.
const startTimeout = 30 * time.Second

// launch runs seq on a goroutine the console owns, bounded by
// Config.MaxConcurrentRuns, and returns the run's id (from its first
// event). first, if set, is called with that event before launch returns.
func (c *Console) launch(ctx context.Context, start func(ctx context.Context) iter.Seq2[agent.Event, error], first func(agent.Event)) (string, error) {
	select {
	case c.runs <- struct{}{}:
	default:
		return "", failure.New(failure.Budget, failure.SourceBus, fmt.Sprintf("the console runs %d runs already; wait for one to end", cap(c.runs)))
	}
	type started struct {
		id  string
		err error
	}
	got := make(chan started, 1)
	ok := c.spawn(func() {
		defer func() { <-c.runs }()
		sent := false
		for ev, err := range start(c.ctx) {
			if !sent {
				sent = true
				if ev.Run == "" && err != nil {
					got <- started{err: err}
					continue
				}
				if first != nil {
					first(ev)
				}
				got <- started{id: ev.Run}
			}
			if err != nil {
				c.log.Debug().Err(err).Str("run", ev.Run).Msg("a run started from the console failed")
			}
		}
		if !sent {
			got <- started{err: failure.New(failure.Internal, failure.SourceBus, "the run ended without an event")}
		}
	})
	if !ok {
		<-c.runs
		return "", failure.New(failure.Unavailable, failure.SourceBus, "the console is closed")
	}
	t := time.NewTimer(startTimeout)
	defer t.Stop()
	select {
	case s := <-got:
		return s.id, s.err
	case <-ctx.Done():
		return "", failure.From(ctx.Err())
	case <-t.C:
		return "", failure.New(failure.Timeout, failure.SourceBus, "the run sent no event within 30s")
	}
}

// startRun starts input on Config.Runner.
func (c *Console) startRun(ctx context.Context, input string) (string, error) {
	r := c.cfg.Runner
	if r == nil {
		return "", failure.New(failure.Config, failure.SourceBus, "this console has no Runner: it cannot start runs")
	}
	return c.launch(ctx, func(ctx context.Context) iter.Seq2[agent.Event, error] { return r.Stream(ctx, input) }, nil)
}

// fork re-runs f.Parent from its turn f.Turn, and records the new run as
// its fork.
func (c *Console) fork(ctx context.Context, f Fork) (string, error) {
	if f.Turn < 0 {
		return "", failure.New(failure.InvalidArgs, failure.SourceBus, "a fork's turn is 0 or more")
	}
	var events []agent.Event
	for ev, err := range c.cfg.Bus.Replay(ctx, f.Parent) {
		if err != nil {
			return "", err
		}
		if len(events) >= c.cfg.MaxRunEvents {
			return "", failure.New(failure.Budget, failure.SourceBus, fmt.Sprintf("run %q has more than %d events: it is too long to fork here", f.Parent, c.cfg.MaxRunEvents))
		}
		events = append(events, ev)
	}
	hist, input, err := historyAt(events, f.Parent, f.Turn)
	if err != nil {
		return "", err
	}
	if f.Input == "" {
		if f.Turn > 0 {
			return "", failure.New(failure.InvalidArgs, failure.SourceBus, "a fork after turn 0 needs an input: the next user message")
		}
		f.Input = input
	}
	f.History = hist
	var start func(ctx context.Context) iter.Seq2[agent.Event, error]
	switch a, ok := c.cfg.Runner.(*agent.Agent); {
	case c.cfg.Forker != nil:
		start = func(ctx context.Context) iter.Seq2[agent.Event, error] { return c.cfg.Forker.Fork(ctx, f) }
	case ok && f.Model == "" && f.Instructions == "":
		start = func(ctx context.Context) iter.Seq2[agent.Event, error] {
			return a.NewSessionFrom(f.History).Stream(ctx, f.Input)
		}
	case ok:
		return "", failure.New(failure.Config, failure.SourceBus, "this console has no Forker: a fork keeps the agent's model and prompt")
	default:
		return "", failure.New(failure.Config, failure.SourceBus, "this console has neither a Forker nor an agent to fork runs with")
	}
	return c.launch(ctx, start, func(ev agent.Event) {
		s := RunSummary{ID: ev.Run, Agent: ev.Agent, Input: clip(redactText(f.Input), maxInput), Started: ev.Time,
			ForkOf: f.Parent, ForkTurn: f.Turn}
		if _, err := c.ix.add(ctx, s, false); err != nil {
			c.pol().Handle(ctx, failure.From(err))
		}
		s.State, s.Seq = "running", c.ix.seqOf(ctx, s.ID)
		c.hub.publish(topicRuns, liveMsg{Kind: "run", Run: &s})
	})
}

// historyAt rebuilds, from the events of run, the conversation after its
// first turn turns: its input, each turn's answer and the results of its
// calls (a call without a recorded result gets one that says so, so that
// every call has exactly one result). It returns the run's input too.
func historyAt(events []agent.Event, run string, turn int) ([]llm.Message, string, error) {
	var msgs []llm.Message
	input, started := "", false
	var calls []llm.ToolCall
	results := map[string]llm.ToolResult{}
	flush := func() {
		if len(calls) == 0 {
			return
		}
		tm := llm.Message{Role: llm.RoleTool}
		for _, tc := range calls {
			r, ok := results[tc.ID]
			if !ok {
				r = llm.ToolResult{CallID: tc.ID, Name: tc.Name, Content: "no result was recorded for this call", IsError: true}
			}
			tm.ToolResults = append(tm.ToolResults, r)
		}
		msgs = append(msgs, tm)
		calls, results = nil, map[string]llm.ToolResult{}
	}
	turns := 0
	for _, ev := range events {
		if ev.Run != run || ev.Parent != nil {
			continue
		}
		switch ev.Type {
		case agent.EventRunStarted:
			if !started { // a resumed run starts again: its first input counts
				started, input = true, ev.Text
				msgs = append(msgs, llm.Message{Role: llm.RoleUser, Text: ev.Text})
			}
		case agent.EventModelTurn:
			flush()
			if ev.Turn > turn {
				if turn == 0 {
					return nil, input, nil
				}
				return msgs, input, nil
			}
			turns = ev.Turn
			msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Text: ev.Text, ToolCalls: slices.Clone(ev.Calls)})
			calls = ev.Calls
		case agent.EventToolFinished:
			if ev.Call != nil && ev.Turn <= turn {
				results[ev.Call.ID] = llm.ToolResult{CallID: ev.Call.ID, Name: ev.Call.Tool, Content: ev.Result.Text(),
					IsError: ev.Result != nil && ev.Result.IsError}
			}
		}
	}
	if !started {
		return nil, "", failure.New(failure.NotFound, failure.SourceBus, fmt.Sprintf("run %q has no stored run_started event", run))
	}
	if turn > turns {
		return nil, "", failure.New(failure.InvalidArgs, failure.SourceBus, fmt.Sprintf("run %q has %d turns; it cannot be forked after turn %d", run, turns, turn))
	}
	flush()
	if turn == 0 {
		return nil, input, nil
	}
	return msgs, input, nil
}
