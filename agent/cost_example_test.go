package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// A run's cost, priced by the agent's table, and a budget in money: the
// scripted model is priced here at $2 per million tokens in and $8 out,
// and asks for a tool call on every turn until the $0.002 budget runs out.
func Example_costBudget() {
	model := llm.NewCyclic(llm.Calls(llm.CallTool("", "ping", nil)))
	ping := agent.NewFuncTool(agent.ToolSpec{Name: "ping", Description: "Answers pong."},
		func(context.Context, json.RawMessage) (*agent.Result, error) { return agent.TextResult("pong"), nil })
	a, err := agent.New(context.Background(), agent.Config{
		Model: model, Tools: []agent.Tool{ping}, Permissions: agent.AllowAll(),
		Prices: llm.DefaultPrices().With(llm.Prices{model.Name(): {Input: 2 * llm.Dollar, Output: 8 * llm.Dollar}}),
		Budget: agent.Budget{MaxCost: llm.Dollars(0.002)},
	})
	if err != nil {
		panic(err)
	}
	ans, err := a.Run(context.Background(), "ping until the money runs out")
	fmt.Println(errors.Is(err, failure.Budget), ans.Cost.Known(), ans.Cost.USD > llm.Dollars(0.002))
	// Output:
	// true true true
}
