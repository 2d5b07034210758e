package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// TestCallGuardTools: rules a tool adds with Call.GuardTools check the
// later calls and results of the tools matching its patterns, in the same
// session, and no other tool's.
func TestCallGuardTools(t *testing.T) {
	for _, tc := range []struct {
		name     string
		patterns []string
		rule     agent.GuardRule
		args     map[string]string
		want     string // in the echo result
		not      string // not in it
		action   string // the echo call's guard event action ("" none)
		setupErr bool
	}{
		{name: "result rewrite", patterns: []string{"echo"}, rule: agent.GuardRule{Guard: wordGuard{}, At: agent.GuardToolResult},
			args: map[string]string{"v": "secret"}, want: "[x]", not: "secret", action: "rewrite"},
		{name: "pattern", patterns: []string{"ec*"}, rule: agent.GuardRule{Guard: wordGuard{}},
			args: map[string]string{"v": "secret"}, want: "[x]", not: "secret", action: "rewrite"},
		{name: "call trip", patterns: []string{"echo"}, rule: agent.GuardRule{Guard: wordGuard{trip: "rm"}, At: agent.GuardToolCall},
			args: map[string]string{"cmd": "rm -rf /"}, want: "guardrail", not: "echo {", action: "trip"},
		{name: "other tool untouched", patterns: []string{"other"}, rule: agent.GuardRule{Guard: wordGuard{}},
			args: map[string]string{"v": "secret"}, want: "secret"},
		{name: "detect only", patterns: []string{"echo"}, rule: agent.GuardRule{Guard: wordGuard{}, DetectOnly: true},
			args: map[string]string{"v": "secret"}, want: "secret", action: "rewrite"},
		{name: "rule without a guard", patterns: []string{"echo"}, rule: agent.GuardRule{},
			args: map[string]string{"v": "secret"}, want: "secret", setupErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var setupErr error
			setup := tool("setup", func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
				c, ok := agent.CallFromContext(ctx)
				if !ok {
					return nil, errors.New("no call")
				}
				setupErr = c.GuardTools(tc.patterns, tc.rule)
				return agent.TextResult("set"), nil
			})
			model := llm.NewScripted(llm.Calls(llm.CallTool("s1", "setup", map[string]any{})),
				llm.Calls(llm.CallTool("e1", "echo", tc.args)), llm.Say("done"))
			a := newAgent(t, agent.Config{Model: model, Tools: []agent.Tool{setup, echoTool("echo", nil)}})
			sess := a.NewSession()
			evs, err := collect(t, sess.Stream(context.Background(), "go"))
			if err != nil {
				t.Fatal(err)
			}
			if fe := (*failure.Error)(nil); (setupErr != nil) != tc.setupErr || (tc.setupErr && (!errors.As(setupErr, &fe) || fe.Kind != failure.Config)) {
				t.Fatalf("GuardTools: %v, want an error %v", setupErr, tc.setupErr)
			}
			var got string
			for _, m := range sess.History() {
				for _, r := range m.ToolResults {
					if r.CallID == "e1" {
						got = r.Content
					}
				}
			}
			if !strings.Contains(got, tc.want) || (tc.not != "" && strings.Contains(got, tc.not)) {
				t.Errorf("echo result %q; want %q and not %q", got, tc.want, tc.not)
			}
			var action string
			for _, g := range guardEvents(evs) {
				if g.Tool == "echo" {
					action = g.Action
				}
			}
			if action != tc.action {
				t.Errorf("guard event action %q, want %q (%+v)", action, tc.action, guardEvents(evs))
			}
		})
	}
}
