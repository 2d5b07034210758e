package agent_test

import (
	"context"
	"fmt"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
)

// An agent with one Go tool, driven by the scripted model.
func Example() {
	type weatherIn struct {
		City string `json:"city"`
	}
	weather := agent.TypedTool(agent.ToolSpec{
		Name:        "get_weather",
		Description: "Current weather for a city.",
		InputSchema: []byte(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
	}, func(ctx context.Context, in weatherIn) (string, error) {
		return "sunny in " + in.City, nil
	})

	model := llm.NewScripted(
		llm.Calls(llm.CallTool("call_1", "get_weather", map[string]string{"city": "Lisbon"})),
		llm.SummarizeResults("Here is what I found"),
	)
	a, err := agent.New(context.Background(), agent.Config{Model: model, Tools: []agent.Tool{weather}})
	if err != nil {
		panic(err)
	}
	ans, err := a.Run(context.Background(), "What's the weather in Lisbon?")
	if err != nil {
		panic(err)
	}
	fmt.Println(ans.Text)
	// Output:
	// Here is what I found (1 tool results, 0 errors)
	// - get_weather: sunny in Lisbon
}

// Streaming a run's events.
func ExampleSession_Stream() {
	model := llm.NewScripted(llm.Say("Hello!"))
	a, _ := agent.New(context.Background(), agent.Config{Model: model})
	for ev, err := range a.NewSession().Stream(context.Background(), "hi") {
		if err != nil {
			fmt.Println("run failed:", err)
			return
		}
		fmt.Printf("%s %q\n", ev.Type, ev.Text)
	}
	// Output:
	// run_started "hi"
	// turn_started ""
	// model_text "Hello!"
	// model_turn "Hello!"
	// final "Hello!"
}

// Offer one agent to another as a tool: the sub-agent's events arrive in the
// caller's stream, nested under the call.
func ExampleAsTool() {
	ctx := context.Background()
	researcher, _ := agent.New(ctx, agent.Config{Name: "researcher", Description: "Finds facts.",
		Model: llm.NewCyclic(llm.Say("NATS queue groups share the load."))})
	tool, _ := agent.AsTool(researcher, nil)
	lead, _ := agent.New(ctx, agent.Config{Name: "lead", Tools: []agent.Tool{tool}, Permissions: agent.AllowAll(),
		Model: llm.NewScripted(
			llm.Calls(llm.CallTool("c1", "researcher", map[string]any{"input": "How do NATS workers share work?"})),
			llm.Say("The researcher says queue groups share the load."))})
	for ev, err := range lead.Stream(ctx, "Explain worker pools") {
		if err != nil {
			fmt.Println(err)
			return
		}
		switch {
		case ev.Type == agent.EventNested && ev.Nested.Type == agent.EventFinal:
			fmt.Printf("%s (in call %s): %s\n", ev.Nested.Agent, ev.Nested.Parent.Call, ev.Nested.Text)
		case ev.Type == agent.EventFinal:
			fmt.Printf("%s: %s\n", ev.Agent, ev.Text)
		}
	}
	// Output:
	// researcher (in call c1): NATS queue groups share the load.
	// lead: The researcher says queue groups share the load.
}
