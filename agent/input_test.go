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

// An empty input on a history that ends with tool results continues it:
// no user message is added, the model answers the results; in a durable
// session too, whose stored history then holds no empty user message.
func TestEmptyInputContinuesToolResults(t *testing.T) {
	hist := []llm.Message{
		{Role: llm.RoleUser, Text: "pick a color"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "pick_color", Args: []byte(`{}`)}}},
		{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "c1", Name: "pick_color", Content: "teal"}}},
	}
	for _, tc := range []struct {
		name    string
		durable agent.Durability
	}{
		{"memory", agent.Durability{}},
		{"durable", agent.Durable(agent.NewMemoryStore(agent.MemoryStoreOptions{}), -1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var roles []string
			model := llm.NewScripted(llm.React(func(req *llm.Request) llm.Step {
				for _, m := range req.Messages {
					roles = append(roles, m.Role)
				}
				return llm.Say("You picked " + req.Messages[len(req.Messages)-1].ToolResults[0].Content)
			}))
			a, err := agent.New(context.Background(), agent.Config{Name: "c", Model: model, Durable: tc.durable})
			if err != nil {
				t.Fatal(err)
			}
			s := a.NewSessionFrom(hist)
			ans, err := s.Run(context.Background(), "")
			if err != nil {
				t.Fatal(err)
			}
			if ans.Text != "You picked teal" || strings.Join(roles, " ") != "user assistant tool" {
				t.Fatalf("answer %q, model saw %v", ans.Text, roles)
			}
			var got []string
			for _, m := range s.History() {
				got = append(got, m.Role)
			}
			if strings.Join(got, " ") != "user assistant tool assistant" {
				t.Fatalf("history %v", got)
			}
		})
	}
}
