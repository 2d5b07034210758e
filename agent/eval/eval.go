// Package eval tests an agent's behaviour: cases (an input, the expected
// tool calls and answer, limits) in sets loaded from testdata, scorers, and
// cassettes that record a run against a real model and replay it offline.
//
//	set, err := eval.Load("testdata/weather.yaml")
//	rep, err := eval.Run(ctx, set, eval.Config{
//		Cassettes: "testdata/cassettes", // Mode Replay: no model key needed
//		Agent: func(ctx context.Context, c *eval.Case, m llm.Model) (agent.Runner, error) {
//			return agent.New(ctx, agent.Config{Model: m, Tools: tools})
//		},
//	})
//	rep.WriteTable(os.Stdout)
//
// Package eval/evaltest runs a set as subtests of a go test; ADK evalset
// files load unchanged ([Load]); see docs/evals.md.
package eval
