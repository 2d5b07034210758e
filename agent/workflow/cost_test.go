package workflow_test

import (
	"context"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/workflow"
	"github.com/switchboard-dev/switchboard/llm"
)

// TestWorkflowSumsCost: a workflow's answer costs what its steps' answers
// cost, summed; one unpriced step makes the sum unknown, its priced part
// kept.
func TestWorkflowSumsCost(t *testing.T) {
	scripted := llm.NewScripted().Name()
	priced := func(name string, in, out llm.USD) workflow.Step {
		a := newAgent(t, agent.Config{Name: name, Prices: llm.Prices{scripted: {Input: in, Output: out}},
			Model: llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step { return llm.Say(name + "(" + lastUser(req) + ")") }))})
		return workflow.Step{Runner: a}
	}
	for _, tc := range []struct {
		name    string
		steps   []workflow.Step
		unknown int
	}{
		{name: "priced", steps: []workflow.Step{priced("a", llm.Dollar, 2*llm.Dollar), priced("b", 3*llm.Dollar, 5*llm.Dollar)}},
		{name: "one unpriced", steps: []workflow.Step{priced("a", llm.Dollar, 2*llm.Dollar), {Runner: echoAgent(t, "free")}}, unknown: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seq, err := workflow.NewSequential(workflow.SequentialConfig{Common: workflow.Common{Name: "chain"}, Steps: tc.steps})
			if err != nil {
				t.Fatal(err)
			}
			evs, err := drain(seq.Stream(context.Background(), "x"))
			if err != nil {
				t.Fatal(err)
			}
			var steps llm.Cost
			n := 0
			for _, e := range evs {
				if e.Type == agent.EventNested && e.Nested.Type == agent.EventFinal {
					steps = steps.Add(e.Nested.Answer.Cost)
					n++
				}
			}
			fin := evs[len(evs)-1].Answer
			if n != len(tc.steps) || fin.Cost != steps || fin.Cost.Unpriced != tc.unknown || fin.Cost.USD <= 0 {
				t.Fatalf("workflow cost %+v, steps' %+v (%d answers), want equal with %d unpriced", fin.Cost, steps, n, tc.unknown)
			}
			if fin.Cost.Known() != (tc.unknown == 0) {
				t.Errorf("Known = %v", fin.Cost.Known())
			}
		})
	}
}
