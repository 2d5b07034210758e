package bus_test

import (
	"context"
	"fmt"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// A single binary: the embedded server, a sampling responder answering with
// a model, and a sampling request, all over NATS.
func Example() {
	ctx := context.Background()
	b, err := bus.New(ctx, bus.Config{}) // embedded nats-server, nothing to install
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Close()

	sampler, _ := bus.NewModelSampler(bus.ModelSamplerConfig{
		Model:  llm.NewCyclic(llm.Say("Paris.")),
		Policy: agent.Allow,
	})
	svc, err := b.ServeSampling(ctx, sampler, bus.ServeOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer svc.Close()

	res, err := b.Sampler().Sample(ctx, agent.SamplingRequest{
		Source:    agent.Provenance{Kind: failure.SourceMCP, Name: "geo"},
		Messages:  []llm.Message{{Role: llm.RoleUser, Text: "Capital of France?"}},
		MaxTokens: 20,
	})
	fmt.Println(res.Text, err)
	// Output: Paris. <nil>
}

// Questions for a person: an agent's permission asks go out on the bus
// (agent.Config{Elicitor: b.Elicitor()}), and whoever serves elicitation
// answers. Without a handler for a kind, the answer is a clear decline.
func ExampleBus_ServeElicitation() {
	ctx := context.Background()
	b, _ := bus.New(ctx, bus.Config{})
	defer b.Close()

	handlers := bus.NewElicitHandlers()
	handlers.Handle(agent.ElicitPermission, agent.ElicitorFunc(func(_ context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
		return agent.ElicitationResult{Action: agent.ElicitAccept}, nil // a console would ask a person here
	}))
	svc, _ := b.ServeElicitation(ctx, handlers, bus.ServeOptions{})
	defer svc.Close()

	ans, _ := b.Elicitor().Elicit(ctx, agent.Elicitation{Kind: agent.ElicitPermission, Run: "run_1", Tool: "delete_file"})
	fmt.Println(ans.Action)
	ans, _ = b.Elicitor().Elicit(ctx, agent.Elicitation{Kind: agent.ElicitURL, Run: "run_1", URL: "https://example.com/login"})
	fmt.Println(ans.Action, "-", ans.Reason)
	// Output:
	// accept
	// decline - no handler is registered for "url" questions, so no one can answer
}

// A late subscriber replays a run's events from JetStream.
func ExampleBus_Subscribe() {
	ctx := context.Background()
	b, _ := bus.New(ctx, bus.Config{})
	defer b.Close()

	b.Emit(ctx, agent.Event{Type: agent.EventRunStarted, Run: "run_1", Seq: 1, Text: "hi"})
	b.Emit(ctx, agent.Event{Type: agent.EventFinal, Run: "run_1", Seq: 2, Text: "hello"})
	_ = b.Flush(ctx)

	for ev, err := range b.Subscribe(ctx, "run_1") {
		fmt.Println(ev.Seq, ev.Type, ev.Text, err)
	}
	// Output:
	// 1 run_started hi <nil>
	// 2 final hello <nil>
}
