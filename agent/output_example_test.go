package agent_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
)

// A typed answer: RunAs derives the schema from a Go type, the agent
// validates the model's answer and has it repaired once (the scripted
// model first forgets a field), and the value comes back decoded.
func ExampleRunAs() {
	type Invoice struct {
		Number string  `json:"number" jsonschema:"the invoice number"`
		Total  float64 `json:"total" jsonschema:"the total, in euros"`
	}
	model := llm.NewScripted(
		llm.Say(`{"number": "F-17"}`),
		llm.Say(`{"number": "F-17", "total": 120.5}`),
	)
	a, err := agent.New(context.Background(), agent.Config{Model: model})
	if err != nil {
		panic(err)
	}
	inv, ans, err := agent.RunAs[Invoice](context.Background(), a, "Read the invoice: F-17, 120.50 EUR.")
	if err != nil {
		panic(err)
	}
	fmt.Printf("%+v\n", inv)
	fmt.Println(string(ans.Data), ans.Turns, "turns,", ans.Failures, "repaired")
	// Output:
	// {Number:F-17 Total:120.5}
	// {"number": "F-17", "total": 120.5} 2 turns, 1 repaired
}

// A schema that comes from configuration: Config.Output declares the
// agent's answer; an answer that stays invalid ends the run with an
// AnswerError.
func ExampleOutputFor() {
	type Verdict struct {
		Approve bool   `json:"approve"`
		Reason  string `json:"reason"`
	}
	out, err := agent.OutputFor[Verdict]()
	if err != nil {
		panic(err)
	}
	fmt.Println(out.Name, string(out.Schema))

	a, _ := agent.New(context.Background(), agent.Config{Output: out, OutputRepairs: -1,
		Model: llm.NewScripted(llm.Say("Looks good to me."))})
	_, err = a.Run(context.Background(), "Review this change.")
	var ae *agent.AnswerError
	fmt.Println(errors.As(err, &ae), ae.Problem != "")
	// Output:
	// Verdict {"type":"object","properties":{"approve":{"type":"boolean"},"reason":{"type":"string"}},"required":["approve","reason"],"additionalProperties":false}
	// true true
}
