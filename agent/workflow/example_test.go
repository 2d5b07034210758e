package workflow_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/workflow"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/worker"
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
		DropFailed:  true,
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

// Hand a conversation from a triage agent to a billing agent, passing on a
// summary rather than the whole history.
func ExampleNewHandoffs() {
	ctx := context.Background()
	toBilling, _ := agent.NewHandoffTool("billing", &agent.HandoffOptions{Context: "summary"})
	triage, _ := agent.New(ctx, agent.Config{Name: "triage", Tools: []agent.Tool{toBilling}, Permissions: agent.AllowAll(),
		Model: llm.NewCyclic(llm.Calls(llm.CallTool("", "handoff_to_billing",
			map[string]any{"task": "Refund the duplicate charge.", "summary": "Customer 42 was charged twice for May."})))})
	billing, _ := agent.New(ctx, agent.Config{Name: "billing", Model: llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
		return llm.Say("Got: " + req.Messages[len(req.Messages)-1].Text)
	}))})
	desk, _ := workflow.NewHandoffs(workflow.HandoffsConfig{Common: workflow.Common{Name: "desk"},
		Agents: []*agent.Agent{triage, billing}})
	ans, err := agent.Run(ctx, desk, "I was charged twice!")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ans.Text)
	// Output:
	// Got: Summary of the conversation so far:
	// Customer 42 was charged twice for May.
	//
	// Task:
	// Refund the duplicate charge.
}

// Refine a draft until a reviewer approves it.
func ExampleNewLoop() {
	ctx := context.Background()
	drafts := 0
	writer, _ := agent.New(ctx, agent.Config{Name: "writer", Model: llm.NewCyclic(llm.React(func(*llm.Request) llm.Step {
		drafts++
		return llm.Say(fmt.Sprintf("draft %d", drafts))
	}))})
	reviewer, _ := agent.New(ctx, agent.Config{Name: "reviewer", Model: llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
		if strings.Contains(req.Messages[len(req.Messages)-1].Text, "draft 2") {
			return llm.Say("APPROVED")
		}
		return llm.Say("Too vague; name the numbers.")
	}))})
	loop, _ := workflow.NewLoop(workflow.LoopConfig{Common: workflow.Common{Name: "refine"},
		Body: workflow.Step{Runner: writer}, Check: &workflow.Step{Runner: reviewer}, MaxIterations: 4})
	ans, err := agent.Run(ctx, loop, "Write the status update.")
	fmt.Println(ans.Text, err)
	// Output:
	// draft 2 <nil>
}

// A fan-out with a merge step: one branch is a pool of worker processes on
// the bus (here a worker in the same process), and a branch that fails is
// dropped with a note instead of failing the review.
func ExampleNewParallel() {
	ctx := context.Background()
	b, err := bus.New(ctx, bus.Config{})
	if err != nil {
		panic(err)
	}
	defer b.Close()
	srv, err := worker.Serve(ctx, b, scriptedAgent("performance", "cache the lookups"), worker.ServeConfig{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	perfPool, err := worker.NewPool(b, "performance", worker.PoolConfig{})
	if err != nil {
		panic(err)
	}
	security, reviewer := scriptedAgent("security", "no secrets in logs"), scriptedAgent("reviewer", "2 findings")

	// readme:begin parallel
	review, _ := workflow.NewParallel(workflow.ParallelConfig{Common: workflow.Common{Name: "review"},
		Branches: []workflow.Step{{Runner: security}, {Runner: perfPool}}, // perfPool: worker.NewPool(b, "performance", …)
		Merge:    &workflow.Step{Runner: reviewer}, DropFailed: true})
	ans, err := agent.Run(ctx, review, "Review PR 42")
	// readme:end

	fmt.Println(ans.Text, err)
	// Output: 2 findings <nil>
}
