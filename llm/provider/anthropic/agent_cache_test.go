package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
)

// TestAgentCachePrefixStable is TestCachePrefixStable's 20-turn run with
// 50 tools made by an agent (agent.Agent, its system prompt, tool
// envelopes and call ids) rather than a loop of requests: 19 turns of a
// tool call, then the answer. Turn N+1's prompt as sent is byte-identical
// to turn N's up to turn N's last breakpoint, and every turn after the
// first reads at least 80% of its input from the cache.
func TestAgentCachePrefixStable(t *testing.T) {
	const turns = 20
	s := newCacheServer(t, func(turn int) string {
		if turn == turns-1 {
			return `[{"type":"text","text":"Every kind audited; the owners of r-0-1 to r-18-1 changed."}]`
		}
		return toolTurn(turn)
	})
	var tools []agent.Tool
	for _, d := range fiftyTools() {
		tools = append(tools, agent.NewFuncTool(agent.ToolSpec{Name: d.Name, Description: d.Description, InputSchema: d.Schema},
			func(_ context.Context, args json.RawMessage) (*agent.Result, error) {
				return agent.TextResult(fmt.Sprintf(`{"records":[{"id":"r-1","changed":true,"note":"owner changed"}],"query":%s}`, args)), nil
			}))
	}
	a, err := agent.New(t.Context(), agent.Config{Model: newCacheModel(t, s), Tools: tools, Permissions: agent.AllowAll(),
		Instructions: "You are an operations assistant. Use the tools to answer; cite record ids.", Budget: agent.Budget{MaxTurns: turns}})
	if err != nil {
		t.Fatal(err)
	}
	var usage []llm.Usage
	for ev, err := range a.NewSession().Stream(t.Context(), "Audit the records of every kind and summarise what changed this week.") {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == agent.EventModelTurn {
			usage = append(usage, *ev.Usage)
		}
	}
	raws := s.requests()
	if len(raws) != turns || len(usage) != turns {
		t.Fatalf("%d requests, %d model turns; want %d", len(raws), len(usage), turns)
	}
	if n := bytes.Count(raws[turns-1], []byte("owner changed")); n != turns-1 {
		t.Fatalf("the last request holds %d tool results, want %d", n, turns-1)
	}
	requirePrefixStable(t, raws)
	requireCacheReads(t, usage)
}
