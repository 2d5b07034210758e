package agent_test

import (
	"context"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// policyToolset records the policy it is given.
type policyToolset struct {
	agent.Toolset
	got []failure.Policy
}

func (p *policyToolset) UsePolicy(pol failure.Policy) { p.got = append(p.got, pol) }

// policySink is an event sink with a policy of its own, as the bus is.
type policySink struct{ pol failure.Policy }

func (s policySink) Emit(context.Context, agent.Event) {}
func (s policySink) Policy() failure.Policy            { return s.pol }

// TestOnePolicy: the agent's policy is the configured one, else its event
// sink's, else a new default; every policyUser toolset is given it.
func TestOnePolicy(t *testing.T) {
	given := failure.NewPolicy(failure.PolicyConfig{})
	sinks := failure.NewPolicy(failure.PolicyConfig{})
	cases := []struct {
		name string
		cfg  agent.Config
		want failure.Policy // nil: a new default
	}{
		{"configured", agent.Config{Policy: given, Events: policySink{sinks}}, given},
		{"the sink's", agent.Config{Events: policySink{sinks}}, sinks},
		{"a new default", agent.Config{}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := &policyToolset{Toolset: agent.NewToolset("x")}
			tc.cfg.Model = llm.NewScripted()
			tc.cfg.Toolsets = []agent.Toolset{ts}
			a, err := agent.New(context.Background(), tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want != nil && a.Policy() != tc.want {
				t.Errorf("agent policy %p, want %p", a.Policy(), tc.want)
			}
			if a.Policy() == nil || a.Policy() == given && tc.want == nil || a.Policy() == sinks && tc.want == nil {
				t.Errorf("agent policy %p, want a new default", a.Policy())
			}
			if len(ts.got) != 1 || ts.got[0] != a.Policy() {
				t.Errorf("toolset was given %v, want exactly the agent's policy", ts.got)
			}
		})
	}
}
