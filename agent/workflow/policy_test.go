package workflow_test

import (
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/workflow"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// TestWorkflowInheritsPolicy: a workflow given no policy uses its first
// step's (an agent's, or a nested workflow's), so one OnFailure sees the
// failures of the workflow and of its agents.
func TestWorkflowInheritsPolicy(t *testing.T) {
	pol := fastPolicy()
	a := newAgent(t, agent.Config{Name: "a", Model: llm.NewCyclic(llm.Say("ok")), Policy: pol})
	b := newAgent(t, agent.Config{Name: "b", Model: llm.NewCyclic(llm.Say("ok"))})
	seq, err := workflow.NewSequential(workflow.SequentialConfig{Common: workflow.Common{Name: "seq"},
		Steps: []workflow.Step{{Runner: a}, {Runner: b}}})
	if err != nil {
		t.Fatal(err)
	}
	par, err := workflow.NewParallel(workflow.ParallelConfig{Common: workflow.Common{Name: "par"},
		Branches: []workflow.Step{{Runner: seq}, {Runner: b}}})
	if err != nil {
		t.Fatal(err)
	}
	own := failure.NewPolicy(failure.PolicyConfig{})
	mine, err := workflow.NewSequential(workflow.SequentialConfig{Common: workflow.Common{Name: "mine", Policy: own},
		Steps: []workflow.Step{{Runner: a}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		got, want failure.Policy
	}{{"sequential", policyOf(seq), pol}, {"nested parallel", policyOf(par), pol}, {"its own", policyOf(mine), own}} {
		if tc.got != tc.want {
			t.Errorf("%s: policy %p, want %p", tc.name, tc.got, tc.want)
		}
	}
}

// policyOf is the policy a workflow runs under (its Policy method).
func policyOf(r agent.Runner) failure.Policy {
	return r.(interface{ Policy() failure.Policy }).Policy()
}
