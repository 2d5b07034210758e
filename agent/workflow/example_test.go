package workflow_test

import (
	"context"
	"fmt"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/workflow"
	"github.com/switchboard-dev/switchboard/llm"
)

// scriptedAgent answers every input with a fixed text, using the offline
// scripted model.
func scriptedAgent(name, answer string) *agent.Agent {
	a, err := agent.New(context.Background(), agent.Config{Name: name, Model: llm.NewCyclic(llm.Say(answer))})
	if err != nil {
		panic(err)
	}
	return a
}

// A planner, two specialists in parallel, and a reviewer, composed as one
// runner.
func Example() {
	specialists, err := workflow.NewParallel(workflow.ParallelConfig{
		Common: workflow.Common{Name: "specialists"},
		Branches: []workflow.Step{
			{Runner: scriptedAgent("security", "no secrets in logs")},
			{Runner: scriptedAgent("performance", "cache the lookups")},
		},
		MaxParallel: 2,
		OnFailure:   workflow.DropBranch,
	})
	if err != nil {
		panic(err)
	}
	pipeline, err := workflow.NewSequential(workflow.SequentialConfig{
		Common: workflow.Common{Name: "review-pipeline"},
		Steps: []workflow.Step{
			{Runner: scriptedAgent("planner", "review the login handler")},
			{Runner: specialists},
			{Runner: scriptedAgent("reviewer", "2 findings, both accepted")},
		},
	})
	if err != nil {
		panic(err)
	}
	for ev, err := range pipeline.Stream(context.Background(), "review PR 42") {
		if err != nil {
			fmt.Println("failed:", err)
			return
		}
		switch ev.Type {
		case agent.EventStepFinished:
			fmt.Printf("step %s: %q\n", ev.Step.Name, ev.Text)
		case agent.EventFinal:
			fmt.Printf("answer: %s (%d model turns)\n", ev.Text, ev.Answer.Turns)
		}
	}
	// Output:
	// step planner: "review the login handler"
	// step specialists: "Task:\nreview the login handler\n\nResults of 2 branches:\n\n## security\nno secrets in logs\n\n## performance\ncache the lookups\n"
	// step reviewer: "2 findings, both accepted"
	// answer: 2 findings, both accepted (4 model turns)
}
