package agent_test

import (
	"context"
	"fmt"
	"iter"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
)

// twice is a Runner of a user's own: it runs its step on the input, then
// again on the step's answer, and nests the step's runs in its own.
type twice struct{ step agent.Runner }

func (twice) Name() string        { return "twice" }
func (twice) Description() string { return "Drafts, then revises the draft." }

func (t twice) Stream(ctx context.Context, input string) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		run := agent.NewRunID()
		var parent *agent.Parent // set when twice itself runs nested (as a tool, a step)
		if p, ok := agent.ParentFrom(ctx); ok {
			parent = &p
		}
		seq := 0
		emit := func(ev agent.Event, err error) bool {
			seq++
			ev.Run, ev.Seq, ev.Time, ev.Agent, ev.Parent = run, seq, time.Now(), t.Name(), parent
			return yield(ev, err)
		}
		if !emit(agent.Event{Type: agent.EventRunStarted, Text: input}, nil) {
			return
		}
		text := input
		for _, step := range []string{"draft", "revise"} {
			// The step's run is nested in this run: its events carry
			// Parent{Run: run, Step: step}, and this run forwards them.
			sctx := agent.WithParent(ctx, agent.Parent{Run: run, Step: step})
			for ev, err := range t.step.Stream(sctx, text) {
				if err != nil {
					emit(agent.Event{Type: agent.EventRunFailed, Text: err.Error()}, err)
					return
				}
				if ev.Type == agent.EventFinal {
					text = ev.Text
				}
				if !yield(agent.Event{Type: agent.EventNested, Nested: &ev}, nil) {
					return
				}
			}
		}
		emit(agent.Event{Type: agent.EventFinal, Text: text, Answer: &agent.Answer{Run: run, Text: text}}, nil)
	}
}

// A Runner of your own nests its runs as the workflows do: a run id from
// NewRunID, its events' Parent from ParentFrom, and its steps' runs
// started under WithParent, so that their events say where they belong.
func Example_runner() {
	ctx := context.Background()
	writer, _ := agent.New(ctx, agent.Config{Name: "writer",
		Model: llm.NewScripted(llm.Say("A first draft."), llm.Say("A better draft."))})
	var run string
	for ev, err := range agent.Runner(twice{step: writer}).Stream(ctx, "Write a note") {
		if err != nil {
			fmt.Println(err)
			return
		}
		switch {
		case ev.Type == agent.EventRunStarted:
			run = ev.Run
		case ev.Type == agent.EventNested && ev.Nested.Type == agent.EventFinal:
			n := ev.Nested
			fmt.Printf("%s, step %s of twice's run (%v): %s\n", n.Agent, n.Parent.Step, n.Parent.Run == run, n.Text)
		case ev.Type == agent.EventFinal:
			fmt.Println("twice:", ev.Text)
		}
	}
	// Output:
	// writer, step draft of twice's run (true): A first draft.
	// writer, step revise of twice's run (true): A better draft.
	// twice: A better draft.
}
