package workflow_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/workflow"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// TestWorkflowSpan: a sequence of traced agents is one invoke_workflow span
// (with the steps' providers) whose children are the steps' runs; with the
// latest conventions it names the workflow in gen_ai.workflow.name.
func TestWorkflowSpan(t *testing.T) {
	for _, latest := range []bool{false, true} {
		t.Run(map[bool]string{false: "1.36", true: "latest"}[latest], func(t *testing.T) {
			if latest {
				t.Setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
			}
			tp, exp := testkit.Tracing(t)
			step := func(name string) *agent.Agent {
				a, err := agent.New(context.Background(), agent.Config{Name: name, Model: llm.NewCyclic(llm.Say(name)),
					Telemetry: agent.Telemetry{TracerProvider: tp}})
				if err != nil {
					t.Fatal(err)
				}
				return a
			}
			seq, err := workflow.NewSequential(workflow.SequentialConfig{Common: workflow.Common{Name: "chain"},
				Steps: []workflow.Step{{Runner: step("plan")}, {Runner: step("write")}}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := agent.Run(testkit.Ctx(t, 10*time.Second), seq, "go"); err != nil {
				t.Fatal(err)
			}
			spans := testkit.SpansFromStubs(exp.GetSpans(), "")
			chat := "chat " + llm.NewScripted().Name()
			want := "invoke_workflow chain\n  invoke_agent plan\n    " + chat + "\n  invoke_agent write\n    " + chat + "\n"
			if got := testkit.Tree(spans); got != want {
				t.Fatalf("span tree:\n%s\nwant:\n%s", got, want)
			}
			attrs := spans[len(spans)-1].Attrs // the workflow's span ends last
			key, other := "gen_ai.agent.name", "gen_ai.workflow.name"
			if latest {
				key, other = other, key
			}
			if attrs["gen_ai.operation.name"] != "invoke_workflow" || attrs[key] != "chain" || attrs[other] != "" {
				t.Errorf("workflow span attributes %v", attrs)
			}
		})
	}
}
