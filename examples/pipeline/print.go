package main

import (
	"context"
	"fmt"
	"io"
	"iter"
	"strings"

	"github.com/switchboard-dev/switchboard/agent"
)

// Print writes a run's events as a tree, indenting each nested run under
// the run that started it, and returns the run's error.
func Print(_ context.Context, w io.Writer, seq iter.Seq2[agent.Event, error]) error {
	depth := map[string]int{}
	for ev, err := range seq {
		if err != nil {
			fmt.Fprintf(w, "✗ %s\n", ev.Failure.Message)
			return err
		}
		e := ev
		if ev.Type == agent.EventNested {
			e = *ev.Nested
		}
		d, ok := depth[e.Run]
		if !ok {
			if e.Parent != nil {
				d = depth[e.Parent.Run] + 1
			}
			depth[e.Run] = d
		}
		line := describe(e)
		if line == "" {
			continue
		}
		fmt.Fprintf(w, "%s%s%s\n", strings.Repeat("  ", d), e.Agent+": ", line)
	}
	return nil
}

// describe is one event's line, or "" for events the tree leaves out.
func describe(e agent.Event) string {
	switch e.Type {
	case agent.EventStepStarted:
		return "step " + e.Step.Name + " started"
	case agent.EventToolStarted:
		return "→ " + e.Call.Tool
	case agent.EventToolProgress:
		return "  ⋯ " + e.Progress.Message
	case agent.EventToolFinished:
		return "✓ " + e.Call.Tool + ": " + short(e.Result.Text())
	case agent.EventFailure:
		return fmt.Sprintf("! %s (%s): %s", e.Failure.Kind, e.Failure.Action, e.Failure.Message)
	case agent.EventFinal:
		if e.Parent == nil {
			return "= " + e.Text
		}
		return "answered: " + short(e.Text)
	}
	return ""
}

func short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 90 {
		return s[:87] + "…"
	}
	return s
}
