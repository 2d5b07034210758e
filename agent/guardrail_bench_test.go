package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/guard"
	"github.com/switchboard-dev/switchboard/llm"
)

// BenchmarkGuardsPerToolCall runs the same run (ten tool calls, each
// returning half a kilobyte of JSON, then an answer) with and without
// three regex guards (PII and prompt injection on results, a deny-list on
// calls), interleaved in the same loop; added-% is the added time per
// tool call as a share of the time per tool call without guards (goal:
// under 5).
func BenchmarkGuardsPerToolCall(b *testing.B) {
	const calls = 10
	out := `{"items":[` + strings.Repeat(`{"id":1234,"name":"widget","price":"12.50","stock":true},`, 8) + `{}]}`
	tl := agent.NewFuncTool(agent.ToolSpec{Name: "lookup", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, json.RawMessage) (*agent.Result, error) { return agent.TextResult(out), nil })
	steps := make([]llm.Step, 0, calls+1)
	for i := range calls {
		steps = append(steps, llm.Calls(llm.CallTool("c"+string(rune('a'+i)), "lookup", map[string]string{"q": "widget"})))
	}
	steps = append(steps, llm.Say("done"))
	deny, err := guard.NewDenyList(guard.DenyConfig{Patterns: []string{`rm\s+-rf`, `(?i)drop\s+table`}})
	if err != nil {
		b.Fatal(err)
	}
	guards := []agent.GuardRule{
		{Guard: guard.NewPII(guard.PIIConfig{}), At: agent.GuardToolResult},
		{Guard: guard.NewInjection(guard.InjectionConfig{}), At: agent.GuardToolResult},
		{Guard: deny, At: agent.GuardToolCall},
	}
	run := func(gs []agent.GuardRule) time.Duration {
		a := newAgent(b, agent.Config{Model: llm.NewScripted(steps...), Tools: []agent.Tool{tl}, Guards: gs})
		t0 := time.Now()
		if _, err := a.NewSession().Run(context.Background(), "go"); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	var plain, guarded time.Duration
	for b.Loop() {
		plain += run(nil)
		guarded += run(guards)
	}
	perCall := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N*calls) }
	b.ReportMetric(perCall(plain), "plain-ns/call")
	b.ReportMetric(perCall(guarded), "guarded-ns/call")
	b.ReportMetric(100*(perCall(guarded)-perCall(plain))/perCall(plain), "added-%")
}
