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
