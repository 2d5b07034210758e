package agent_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// benchTool is the tool both benchmarks call: it decodes its arguments and
// returns a short text, like a typical local tool.
func benchTool() agent.Tool {
	return agent.NewFuncTool(agent.ToolSpec{Name: "add", Description: "adds two numbers",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`)},
		func(_ context.Context, args json.RawMessage) (*agent.Result, error) {
			var in struct{ A, B float64 }
			if err := json.Unmarshal(args, &in); err != nil {
				return nil, err
			}
			b, _ := json.Marshal(in.A + in.B)
			return agent.TextResult(string(b)), nil
		})
}

var benchArgs = json.RawMessage(`{"a":1,"b":2}`)

// BenchmarkDirectToolCall is the baseline: the tool called directly.
func BenchmarkDirectToolCall(b *testing.B) {
	t := benchTool()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := t.Call(ctx, benchArgs); err != nil {
			b.Fatal(err)
		}
	}
}

// cooperativeTool is benchTool as a source such as an MCP server offers
// it: it honours cancellation (as tools once promised) and validates its own
// arguments (as MCP tools do).
type cooperativeTool struct{ agent.Tool }

func (c cooperativeTool) Spec() agent.ToolSpec {
	s := c.Tool.Spec()
	s.Source = agent.Provenance{Kind: failure.SourceMCP, Name: "bench", Tool: s.Name}
	return s
}

// BenchmarkAgentToolCall measures the loop's cost per tool call: one run
// makes 10 calls (one per turn) with the scripted model, then answers. The
// baseline runs in the same benchmark so the ratio is measured under the same
// conditions; "added-ns/call" is the loop's own cost (validation,
// permission, policy, events, history, one model turn) per call. "guarded"
// is a local Go tool (run under the guard goroutine, arguments validated by
// the agent); "cooperative" a tool like an MCP server's (called directly in
// Session.Run, arguments validated by its source).
func BenchmarkAgentToolCall(b *testing.B) {
	for _, kind := range []string{"guarded", "cooperative"} {
		b.Run(kind, func(b *testing.B) {
			tl := benchTool()
			if kind == "cooperative" {
				tl = cooperativeTool{tl}
			}
			benchAgent(b, tl)
		})
	}
}

func benchAgent(b *testing.B, tl agent.Tool) {
	const calls = 10
	steps := make([]llm.Step, 0, calls+1)
	for range calls {
		steps = append(steps, llm.Calls(llm.CallTool("c", "add", benchArgs)))
	}
	steps = append(steps, llm.Say("3"))
	model := llm.NewCyclic(steps...)
	a, err := agent.New(context.Background(), agent.Config{Model: model, Tools: []agent.Tool{tl}, Permissions: agent.AllowAll()})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()

	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		if _, err := a.Run(ctx, "add 1 and 2 ten times"); err != nil {
			b.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()

	// The baseline, in the same run: the same number of direct calls.
	n := b.N * calls
	dstart := time.Now()
	for range n {
		if _, err := tl.Call(ctx, benchArgs); err != nil {
			b.Fatal(err)
		}
	}
	direct := float64(time.Since(dstart).Nanoseconds()) / float64(n)
	perCall := float64(elapsed.Nanoseconds()) / float64(n)
	b.ReportMetric(perCall, "ns/call")
	b.ReportMetric(direct, "direct-ns/call")
	b.ReportMetric(perCall-direct, "added-ns/call")
	b.ReportMetric(perCall/direct, "ratio")
}
