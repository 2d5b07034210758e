package mcp

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// TestAgentRun drives the manager's toolset through a real agent: progress
// events, a list change seen by the agent, and a tool that appeared
// mid-run called in the next turn.
//
// The manager refreshes its list in the background after the server's
// list_changed notification, so the consumer holds the run (events are
// yielded on the run's goroutine) after the flood call until the refresh is
// visible and its change signal is pending: the next turn then sees exactly
// one change and lists the new tool, however slowly the machine runs.
func TestAgentRun(t *testing.T) {
	m := newManager(t, quickConfig(testServer("s", "", nil)))
	ctx := context.Background()
	hasExtra := func() bool {
		tools, _ := m.Toolset().Tools(ctx)
		for _, tl := range tools {
			if tl.Spec().Name == "mcp__s__extra-000" {
				return true
			}
		}
		return false
	}
	model := llm.NewScripted(
		llm.Calls(
			llm.CallTool("c1", "mcp__s__slow", map[string]any{"steps": 3, "step_ms": 20}),
			llm.CallTool("c2", "mcp__s__flood", map[string]any{"n": 1}),
		),
		llm.Calls(llm.CallTool("c3", "mcp__s__extra-000", nil)),
		llm.SummarizeResults("done"),
	)
	var mu sync.Mutex
	var asked []string
	approve := agent.ElicitorFunc(func(ctx context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, e.Tool)
		return agent.ElicitationResult{Action: agent.ElicitAccept}, nil
	})
	a, err := agent.New(ctx, agent.Config{Model: model, Toolsets: []agent.Toolset{m.Toolset()}, Elicitor: approve})
	if err != nil {
		t.Fatal(err)
	}
	counts := map[agent.EventType]int{}
	var final string
	for ev, err := range a.Stream(ctx, "go") {
		if err != nil {
			t.Fatal(err)
		}
		counts[ev.Type]++
		if ev.Type == agent.EventToolFinished && ev.Call.Tool == "mcp__s__flood" {
			testkit.WaitFor(t, 30*time.Second, "the refreshed list and its change signal",
				func() bool { return hasExtra() && len(m.changed) == 1 })
		}
		if ev.Type == agent.EventToolFinished && ev.Result.IsError {
			t.Errorf("%s failed: %s", ev.Call.Tool, ev.Result.Text())
		}
		if ev.Type == agent.EventFinal {
			final = ev.Text
		}
	}
	tests := []struct {
		ev   agent.EventType
		want int
	}{
		{agent.EventToolFinished, 3},
		{agent.EventToolsChanged, 1},
	}
	for _, tt := range tests {
		if counts[tt.ev] != tt.want {
			t.Errorf("%d %s events, want %d", counts[tt.ev], tt.ev, tt.want)
		}
	}
	// Progress is lossy by design (the agent drops reports rather than
	// block a tool, and go-sdk may handle the last notification after the
	// result), but some must arrive.
	if n := counts[agent.EventToolProgress]; n < 1 || n > 3 {
		t.Errorf("%d progress events for 3 notifications", n)
	}
	// The test server's tools have no annotations: destructive by default,
	// so the permission policy asks before each runs.
	if len(asked) != 3 {
		t.Errorf("permission asks for %v, want 3", asked)
	}
	if !strings.Contains(final, "mcp__s__extra-000: extra") {
		t.Errorf("final %q", final)
	}
}
