// Package workflow composes agents into pipelines that are themselves
// agents: each workflow is an [agent.Runner], so workflows nest, can be
// offered to another agent as a tool ([agent.AsTool]), run on a pool of remote
// workers, and be served over A2A.
//
//	review, _ := workflow.NewSequential(workflow.SequentialConfig{Steps: []workflow.Step{
//		{Name: "draft", Runner: writer},
//		{Name: "review", Runner: reviewer},
//	}})
//	answer, err := agent.Run(ctx, review, "a release note for v2.3")
//
// The four shapes:
//
//   - [NewSequential] runs steps in order, the output of one feeding the next.
//   - [NewParallel] fans a task out to branches with bounded concurrency, then
//     merges their outputs in a merge step. A failed branch is retried by the
//     failure policy, then dropped with a note or fails the whole workflow,
//     as configured.
//   - [NewLoop] runs a body until a condition holds (a Go function, or a check
//     step such as a reviewer agent) or its budget ends.
//   - [NewHandoffs] runs a conversation that agents hand to each other with
//     handoff tools ([agent.NewHandoffTool]), passing on the full history, a
//     summary or only the task, as each handoff tool says.
//
// Typed answers pass between steps: a step whose runner is typed
// ([agent.Typed], an agent with Config.Output) or whose [Step.Output] asks
// for a shape answers a validated JSON value ([agent.Answer].Data); the
// next step's default input is that JSON, and [Input].PreviousData holds it
// for a step's Input function to decode. A workflow is typed by the step
// that gives its answer (the last step, the body, the merge step), and an
// answer shape asked of the workflow ([agent.Input].Output, [agent.RunAs])
// goes to that step; the steps never see the workflow's own agent.Input
// otherwise (its Parts go to the steps that take its task).
//
// A workflow's run streams its own events (run_started, step_started,
// step_finished, failure, final or run_failed) and, as agent.EventNested,
// every event of its steps' runs, whose Parent names the workflow's run and
// the step. Cancelling the workflow's context (or stopping the iteration)
// cancels every running step; each step's agent still records a result for
// every tool call it made.
package workflow
