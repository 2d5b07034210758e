package agent_test

import (
	"context"
	"encoding/json"
	"slices"
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
// calls): the two agents differ only in Config.Guards. Each iteration runs
// both, the first in turn (so that neither always runs after the other's
// garbage); added-% is the added wall time per tool call as a share of the
// time per tool call without guards (goal: under 5). On a shared machine
// wall time also holds the time other processes had the CPU, which falls
// on one run or the other by chance: added-p50-% is the median of the
// iterations' added times over the median plain run, which such outliers
// move less, and cpu-added-% the share in the process's CPU time, from
// blocks of runs of each agent measured apart after the timed loop
// (blockCPU), as many runs again.
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
	variants := [2][]agent.GuardRule{nil, guards}
	run := func(gs []agent.GuardRule) time.Duration {
		a := newAgent(b, agent.Config{Model: llm.NewScripted(steps...), Tools: []agent.Tool{tl}, Guards: gs})
		t0 := time.Now()
		if _, err := a.NewSession().Run(context.Background(), "go"); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	var wall [2]time.Duration
	var plain, added []float64 // per iteration
	for i := 0; b.Loop(); i++ {
		var d [2]time.Duration
		for k := range 2 {
			v := (i + k) % 2
			d[v] = run(variants[v])
			wall[v] += d[v]
		}
		plain, added = append(plain, float64(d[0])), append(added, float64(d[1]-d[0]))
	}
	b.StopTimer()
	const block = 10
	var cpu [2]time.Duration
	for i := 0; i < max(b.N/block, 1); i++ {
		for k := range 2 {
			v := (i + k) % 2
			cpu[v] += blockCPU(block, func() { run(variants[v]) })
		}
	}
	perCall := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N*calls) }
	b.ReportMetric(perCall(wall[0]), "plain-ns/call")
	b.ReportMetric(perCall(wall[1]), "guarded-ns/call")
	b.ReportMetric(100*float64(wall[1]-wall[0])/float64(wall[0]), "added-%")
	b.ReportMetric(100*median(added)/median(plain), "added-p50-%")
	b.ReportMetric(100*float64(cpu[1]-cpu[0])/float64(cpu[0]), "cpu-added-%")
}

// median is the median of xs (which it sorts).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	if n := len(xs); n%2 == 0 {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
	return xs[len(xs)/2]
}
