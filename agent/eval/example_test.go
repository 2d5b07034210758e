package eval_test

import (
	"context"
	"fmt"
	"os"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/eval"
	"github.com/switchboard-dev/switchboard/llm"
)

// Example scores a weather agent on one case, live against a scripted
// model: the tool it called, with which arguments, and its answer.
func Example() {
	set := &eval.Set{Name: "weather", Cases: []eval.Case{{
		Name:  "lisbon",
		Input: eval.Input{Text: "What's the weather in Lisbon?"},
		Trajectory: &eval.Trajectory{Calls: []eval.ExpectedCall{{Tool: "get_weather",
			ArgsRegex: map[string]string{"city": "^Lisbon$"}}}},
		Answer: &eval.Answer{Contains: []string{"sunny"}},
	}}}
	model := llm.NewScripted(
		llm.Calls(llm.CallTool("c1", "get_weather", map[string]string{"city": "Lisbon"})),
		llm.SummarizeResults("Found:"),
	)
	rep, err := eval.Run(context.Background(), set, eval.Config{Model: model,
		Agent: func(ctx context.Context, _ *eval.Case, m llm.Model) (agent.Runner, error) {
			return agent.New(ctx, agent.Config{Model: m, Tools: []agent.Tool{weatherTool("Current weather for a city.")}})
		}})
	if err != nil {
		panic(err)
	}
	for _, s := range rep.Cases[0].Scores {
		fmt.Printf("%s %.2f %v\n", s.Scorer, s.Value, s.Pass)
	}
	fmt.Println("passed:", rep.Passed)
	// Output:
	// trajectory 1.00 true
	// args 1.00 true
	// answer 1.00 true
	// limits 1.00 true
	// passed: 1
}

// ExampleCompare says which cases of a set got better or worse.
func ExampleCompare() {
	before := &eval.Report{Cases: []eval.CaseResult{{Case: "a", Pass: true, Score: 1}, {Case: "b", Score: 0.5}}}
	after := &eval.Report{Cases: []eval.CaseResult{{Case: "a", Score: 0.5}, {Case: "b", Pass: true, Score: 1}}}
	cmp := eval.Compare(before, after)
	_ = cmp.WriteText(os.Stdout)
	// Output:
	// better  b: fail 0.50 -> pass 1.00
	// WORSE   a: pass 1.00 -> fail 0.50
	// 1 better, 1 worse, 0 the same
}
