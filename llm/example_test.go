package llm_test

import (
	"context"
	"fmt"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// The scripted model plays turns in order: here a parallel pair of tool
// calls, then a summary of their results.
func ExampleNewScripted() {
	model := llm.NewScripted(
		llm.Calls(llm.CallTool("c1", "ping", nil), llm.CallTool("c2", "fetch", map[string]string{"url": "https://example.com"})),
		llm.SummarizeResults("Done."),
	)
	resp, _ := model.Generate(context.Background(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "check"}}})
	for _, c := range resp.Message.ToolCalls {
		args := string(c.Args)
		if args == "" {
			args = "(no arguments)"
		}
		fmt.Println("call", c.Name, args)
	}
	resp, _ = model.Generate(context.Background(), &llm.Request{Messages: []llm.Message{
		{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{Name: "ping", Content: "pong"}, {Name: "fetch", Content: "timed out", IsError: true}}},
	}})
	fmt.Println(resp.Message.Text)
	fmt.Println(model.Name())
	// Output:
	// call ping (no arguments)
	// call fetch {"url":"https://example.com"}
	// Done. (2 tool results, 1 errors)
	// - ping: pong
	// - fetch: timed out
	// scripted (offline, deterministic; not a real model)
}

// A fallback chain answers from the next model when one is down: here the
// first fails transiently (its own retries spent), and the second answers.
func ExampleNewFallback() {
	down := llm.NewScripted(llm.Step{Err: &failure.Error{Kind: failure.Transient, Source: failure.SourceModel, Message: "overloaded"}})
	up := llm.NewScripted(llm.Say("answered by the second model"))
	chain, err := llm.NewFallback(llm.FallbackConfig{Models: []llm.Model{down, up}})
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := chain.Generate(context.Background(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}})
	fmt.Println(resp.Message.Text, err)
	// Output: answered by the second model <nil>
}

// A price table turns a turn's usage into money, exactly; a model with no
// price has an unknown cost, not a zero one.
func ExamplePrices() {
	prices := llm.DefaultPrices().With(llm.Prices{
		"acme/house-model": {Input: llm.Dollars(0.5), Output: 2 * llm.Dollar},
	})
	usage := llm.Usage{InputTokens: 12_000, CacheReadTokens: 8_000, OutputTokens: 900}
	for _, model := range []string{"openai/gpt-4o-mini-2024-07-18", "acme/house-model", "scripted"} {
		if p, ok := prices.Lookup(model); ok {
			fmt.Println(model, p.Cost(usage))
		} else {
			fmt.Println(model, llm.Cost{Unpriced: 1})
		}
	}
	// Output:
	// openai/gpt-4o-mini-2024-07-18 $0.00174
	// acme/house-model $0.0078
	// scripted cost unknown
}
