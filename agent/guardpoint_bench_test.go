package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/guard"
)

// BenchmarkGuardPoints is the guard work of one tool call of
// BenchmarkGuardsPerToolCall alone: its call through the deny-list, its
// result through the PII and injection guards (agent.Guards, the same
// checks a run makes), and each guard's Check on its own.
func BenchmarkGuardPoints(b *testing.B) {
	out := `{"items":[` + strings.Repeat(`{"id":1234,"name":"widget","price":"12.50","stock":true},`, 8) + `{}]}`
	args := json.RawMessage(`{"q":"widget"}`)
	deny, err := guard.NewDenyList(guard.DenyConfig{Patterns: []string{`rm\s+-rf`, `(?i)drop\s+table`}})
	if err != nil {
		b.Fatal(err)
	}
	pii, inj := guard.NewPII(guard.PIIConfig{}), guard.NewInjection(guard.InjectionConfig{})
	gs, err := agent.NewGuards([]agent.GuardRule{
		{Guard: pii, At: agent.GuardToolResult},
		{Guard: inj, At: agent.GuardToolResult},
		{Guard: deny, At: agent.GuardToolCall},
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	res := agent.TextResult(out)
	c := agent.GuardCheck{Run: "r", Tool: "lookup"}
	b.Run("call+result", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := gs.Call(ctx, c, args); err != nil {
				b.Fatal(err)
			}
			if _, _, err := gs.Result(ctx, c, res); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, g := range []struct {
		name string
		g    agent.Guard
		text string
	}{{"deny", deny, string(args)}, {"pii", pii, out}, {"injection", inj, out}} {
		b.Run(g.name, func(b *testing.B) {
			b.ReportAllocs()
			gc := agent.GuardCheck{Point: agent.GuardToolResult, Text: g.text}
			for b.Loop() {
				if v, _ := g.g.Check(ctx, gc); v.Action != agent.GuardPass {
					b.Fatal(v)
				}
			}
		})
	}
}
