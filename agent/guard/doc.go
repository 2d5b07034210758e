// Package guard holds Switchboard's built-in guards ([agent.Guard]): PII
// and secret detection and redaction, prompt-injection heuristics, a JSON
// Schema check, a deny-list and an LLM judge. Each is a value to put in
// [agent.Config].Guards:
//
//	a, err := agent.New(ctx, agent.Config{
//		Model: model,
//		Guards: []agent.GuardRule{
//			{Guard: guard.NewPII(guard.PIIConfig{}), At: agent.GuardToolResult | agent.GuardOutput},
//			{Guard: guard.NewInjection(guard.InjectionConfig{}), At: agent.GuardToolResult},
//			{Guard: guard.NewDenyList(guard.DenyConfig{Words: []string{"rm -rf"}}), At: agent.GuardToolCall},
//			{Guard: guard.NewJudge(guard.JudgeConfig{Model: judge, Rubric: "no medical advice"}),
//				At: agent.GuardOutput, Timeout: 5 * time.Second},
//		},
//	})
//
// See docs/guardrails.md.
package guard
