package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
)

// Input.Tools are offered to one run only, and Input.Instructions reach its
// system prompt; a name the agent's own tools have keeps the agent's tool.
func TestInputToolsAndInstructions(t *testing.T) {
	own := agent.TypedTool(agent.ToolSpec{Name: "lookup", Description: "agent's", ReadOnly: true},
		func(ctx context.Context, _ struct{}) (string, error) { return "agent lookup", nil })
	extra := agent.TypedTool(agent.ToolSpec{Name: "pick_color", Description: "input's", ReadOnly: true},
		func(ctx context.Context, _ struct{}) (string, error) { return "blue", nil })
	shadow := agent.TypedTool(agent.ToolSpec{Name: "lookup", Description: "input's lookup", ReadOnly: true},
		func(ctx context.Context, _ struct{}) (string, error) { return "input lookup", nil })
	var tools [][]string
	var system []string
	model := llm.NewScripted(
		llm.React(func(req *llm.Request) llm.Step {
			var names []string
			for _, d := range req.Tools {
				names = append(names, d.Name)
			}
			tools, system = append(tools, names), append(system, req.System)
			return llm.Calls(llm.CallTool("c1", "pick_color", nil), llm.CallTool("c2", "lookup", nil))
		}),
		llm.SummarizeResults("got"),
		llm.React(func(req *llm.Request) llm.Step {
			var names []string
			for _, d := range req.Tools {
				names = append(names, d.Name)
			}
			tools, system = append(tools, names), append(system, req.System)
			return llm.Say("plain")
		}),
	)
	a, err := agent.New(context.Background(), agent.Config{Name: "t", Model: model, Tools: []agent.Tool{own}})
	if err != nil {
		t.Fatal(err)
	}
	s := a.NewSession()
	ctx := agent.WithInput(context.Background(), agent.Input{Tools: []agent.Tool{extra, shadow}, Instructions: "The user likes blue."})
	var failures int
	var ans string
	for ev, err := range s.Stream(ctx, "pick") {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == agent.EventFailure {
			failures++
		}
		if ev.Type == agent.EventFinal {
			ans = ev.Text
		}
	}
	if !strings.Contains(ans, "blue") || !strings.Contains(ans, "agent lookup") {
		t.Fatalf("answer %q: want the input tool's and the agent tool's results", ans)
	}
	if failures != 1 {
		t.Fatalf("%d failures, want 1 (the collision, reported once)", failures)
	}
	if _, err := s.Run(context.Background(), "again"); err != nil {
		t.Fatal(err)
	}
	if len(tools) != 2 || strings.Join(tools[0], ",") != "lookup,pick_color" || strings.Join(tools[1], ",") != "lookup" {
		t.Fatalf("tools per run %v: the input's tools belong to its run only", tools)
	}
	if !strings.Contains(system[0], "The user likes blue.") || strings.Contains(system[1], "blue") {
		t.Fatalf("system prompts %q", system)
	}
}
