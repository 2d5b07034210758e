package workflow_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/workflow"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// TestWorkflowPolicy: a workflow given no policy handles its failures with
// the process default, not with its first step's policy; a Common.Policy
// wins over the default. The step's agent keeps its own.
func TestWorkflowPolicy(t *testing.T) {
	count := func(n *atomic.Int64) failure.Policy {
		return testkit.FastPolicy(failure.PolicyConfig{BreakerFailures: 100,
			OnFailure: func(context.Context, failure.Outcome) { n.Add(1) }})
	}
	for _, tc := range []struct {
		name            string
		own             bool
		wantDef, wantWf int64
	}{
		{name: "the default", wantDef: 1},
		{name: "its own", own: true, wantWf: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var def, wf, step atomic.Int64
			testkit.SetDefault(t, count(&def))
			bad := newAgent(t, agent.Config{Name: "bad", Policy: count(&step), Model: llm.NewCyclic(llm.Step{
				Err: &failure.Error{Kind: failure.Model, Source: failure.SourceModel, Message: "refused"}})})
			c := workflow.Common{Name: "seq-" + tc.name}
			if tc.own {
				c.Policy = count(&wf)
			}
			seq, err := workflow.NewSequential(workflow.SequentialConfig{Common: c,
				Steps: []workflow.Step{{Runner: bad}}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := drain(seq.Stream(context.Background(), "x")); err == nil {
				t.Fatal("the failing step did not fail the workflow")
			}
			if def.Load() != tc.wantDef || wf.Load() != tc.wantWf || step.Load() == 0 {
				t.Errorf("failures seen by the default %d, by Common.Policy %d, by the step's %d; want %d, %d and some",
					def.Load(), wf.Load(), step.Load(), tc.wantDef, tc.wantWf)
			}
		})
	}
}
