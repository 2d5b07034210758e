package workflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// echoAgent answers "<name>(<input>)" in one turn.
func echoAgent(t testing.TB, name string) *agent.Agent {
	t.Helper()
	return newAgent(t, agent.Config{Name: name, Description: name + " echoes",
		Model: llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step { return llm.Say(name + "(" + lastUser(req) + ")") }))})
}

// toolAgent calls tool t once and then answers "<name>: <result>".
func toolAgent(tb testing.TB, name string, tl agent.Tool) *agent.Agent {
	tb.Helper()
	return newAgent(tb, agent.Config{Name: name,
		Model: llm.NewCyclic(
			llm.Calls(llm.CallTool("", tl.Spec().Name, map[string]any{})),
			llm.React(func(req *llm.Request) llm.Step {
				rs := testkit.LastToolResults(req)
				return llm.Say(name + ": " + rs[0].Content)
			})),
		Tools: []agent.Tool{tl}})
}

// failingAgent's model fails every turn with err.
func failingAgent(tb testing.TB, name string, err error) *agent.Agent {
	tb.Helper()
	return newAgent(tb, agent.Config{Name: name, Model: llm.NewCyclic(llm.Step{Err: err})})
}

func newAgent(tb testing.TB, cfg agent.Config) *agent.Agent {
	tb.Helper()
	cfg.Permissions = agent.AllowAll()
	if cfg.Policy == nil {
		cfg.Policy = fastPolicy()
	}
	a, err := agent.New(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

func fn(name string, f func(ctx context.Context) (string, error)) agent.Tool {
	return agent.NewFuncTool(agent.ToolSpec{Name: name, Description: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
			s, err := f(ctx)
			if err != nil {
				return nil, err
			}
			return agent.TextResult(s), nil
		})
}

// drain runs a stream and returns its events and error.
func drain(seq func(func(agent.Event, error) bool)) ([]agent.Event, error) {
	var evs []agent.Event
	var err error
	for ev, e := range seq {
		evs = append(evs, ev)
		if e != nil {
			err = e
		}
	}
	return evs, err
}

// top returns the workflow's own events (not nested ones) of type typ.
func top(evs []agent.Event, typ agent.EventType) []agent.Event {
	var out []agent.Event
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// nestedOf returns the nested events of type typ.
func nestedOf(evs []agent.Event, typ agent.EventType) []agent.Event {
	var out []agent.Event
	for _, e := range evs {
		if e.Type == agent.EventNested && e.Nested.Type == typ {
			out = append(out, *e.Nested)
		}
	}
	return out
}

func kind(t testing.TB, err error) failure.Kind {
	t.Helper()
	var fe *failure.Error
	if !errors.As(err, &fe) {
		t.Fatalf("%v (%T) is not a *failure.Error", err, err)
	}
	return fe.Kind
}

func mustContain(t testing.TB, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Fatalf("%q does not contain %q", s, sub)
		}
	}
}

// fastPolicy retries quickly, and opens no breaker during a test.
func fastPolicy() failure.Policy {
	return testkit.FastPolicy(failure.PolicyConfig{MaxBackoff: 2 * time.Millisecond, BreakerFailures: 100, BreakerCooldown: time.Minute})
}

var lastUser = testkit.LastUser
