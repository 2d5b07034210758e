package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// tool builds a local tool with a permissive object schema.
func tool(name string, fn func(ctx context.Context, args json.RawMessage) (*agent.Result, error)) agent.Tool {
	return agent.NewFuncTool(agent.ToolSpec{Name: name, Description: "test tool " + name,
		InputSchema: json.RawMessage(`{"type":"object"}`)}, fn)
}

// echoTool returns its arguments as text.
func echoTool(name string, calls *atomic.Int32) agent.Tool {
	return tool(name, func(_ context.Context, args json.RawMessage) (*agent.Result, error) {
		if calls != nil {
			calls.Add(1)
		}
		return agent.TextResult("echo " + string(args)), nil
	})
}

// newAgent builds an agent that allows every tool unless cfg says otherwise.
func newAgent(t testing.TB, cfg agent.Config) *agent.Agent {
	t.Helper()
	if cfg.Permissions == nil {
		cfg.Permissions = agent.AllowAll()
	}
	if cfg.Policy == nil {
		cfg.Policy = fastPolicy(time.Minute)
	}
	a, err := agent.New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("agent.New: %v", err)
	}
	return a
}

// collect runs a stream and returns its events and final error.
func collect(t testing.TB, seq func(func(agent.Event, error) bool)) ([]agent.Event, error) {
	t.Helper()
	var evs []agent.Event
	var err error
	for ev, e := range seq {
		if e != nil {
			err = e
			continue
		}
		evs = append(evs, ev)
	}
	return evs, err
}

// checkOneResultPerCall asserts the conversation invariant: every tool call
// of every assistant message is answered by exactly one result, in the next
// message, and nothing else is.
func checkOneResultPerCall(t testing.TB, hist []llm.Message) {
	t.Helper()
	for i, m := range hist {
		if m.Role != llm.RoleAssistant || len(m.ToolCalls) == 0 {
			if m.Role == llm.RoleTool && (i == 0 || len(hist[i-1].ToolCalls) == 0) {
				t.Errorf("message %d: tool results without a preceding tool call", i)
			}
			continue
		}
		if i+1 >= len(hist) || hist[i+1].Role != llm.RoleTool {
			t.Fatalf("message %d: %d tool calls have no results", i, len(m.ToolCalls))
		}
		got := map[string]int{}
		for _, r := range hist[i+1].ToolResults {
			got[r.CallID]++
		}
		for _, c := range m.ToolCalls {
			if got[c.ID] != 1 {
				t.Errorf("call %s (%s): %d results, want exactly 1", c.ID, c.Name, got[c.ID])
			}
			delete(got, c.ID)
		}
		for id := range got {
			t.Errorf("result for unknown call %s", id)
		}
	}
}

// lastResults returns the tool results of the last tool message.
func lastResults(hist []llm.Message) []llm.ToolResult {
	for i := len(hist) - 1; i >= 0; i-- {
		if hist[i].Role == llm.RoleTool {
			return hist[i].ToolResults
		}
	}
	return nil
}

func eventsOf(evs []agent.Event, typ agent.EventType) []agent.Event {
	var out []agent.Event
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func kindOf(t testing.TB, err error) failure.Kind {
	t.Helper()
	var fe *failure.Error
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T) is not a *failure.Error", err, err)
	}
	return fe.Kind
}

// fastPolicy is the default policy with short backoffs for tests.
func fastPolicy(cooldown time.Duration) failure.Policy {
	return testkit.FastPolicy(failure.PolicyConfig{MaxBackoff: 2 * time.Millisecond, BreakerFailures: 3, BreakerCooldown: cooldown})
}
