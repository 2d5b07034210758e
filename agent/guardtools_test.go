package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// guardingToolset is a toolset whose tools put guards over other tools
// (Call.GuardTools), resolving their names with its guards (its Guard
// method, nil: it has none).
type guardingToolset struct {
	agent.Toolset
	guards map[string]agent.Guard
}

func (g guardingToolset) Guard(name string) (agent.Guard, bool) {
	gd, ok := g.guards[name]
	return gd, ok
}

// setupTool grants and guards the echo tool with the guard named name,
// reporting GuardTools' error in *err.
func setupTool(patterns []string, name string, err *error) agent.Tool {
	return tool("setup", func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
		c, ok := agent.CallFromContext(ctx)
		if !ok {
			return nil, errors.New("no call")
		}
		c.Grant(patterns...)
		*err = c.GuardTools(patterns, name)
		return agent.TextResult("set"), nil
	})
}

// TestCallGuardTools: guards a tool puts with Call.GuardTools (named, and
// resolved by its toolset) check the later calls and results of the tools
// matching its patterns, in the same session, and no other tool's; a name
// the toolset does not know, or a toolset that resolves no names, is a
// Config failure.
func TestCallGuardTools(t *testing.T) {
	word := map[string]agent.Guard{"word": wordGuard{}, "no-rm": wordGuard{trip: "rm"}}
	for _, tc := range []struct {
		name     string
		patterns []string
		guard    string
		guards   map[string]agent.Guard // nil: a toolset without a Guard method
		args     map[string]string
		want     string // in the echo result
		not      string // not in it
		action   string // the echo call's guard event action ("" none)
		setupErr bool
	}{
		{name: "rewrite", patterns: []string{"echo"}, guard: "word", guards: word,
			args: map[string]string{"v": "secret"}, want: "[x]", not: "secret", action: "rewrite"},
		{name: "pattern", patterns: []string{"ec*"}, guard: "word", guards: word,
			args: map[string]string{"v": "secret"}, want: "[x]", not: "secret", action: "rewrite"},
		{name: "call trip", patterns: []string{"echo"}, guard: "no-rm", guards: word,
			args: map[string]string{"cmd": "rm -rf /"}, want: "guardrail", not: "echo {", action: "trip"},
		{name: "other tool untouched", patterns: []string{"other"}, guard: "word", guards: word,
			args: map[string]string{"v": "secret"}, want: "secret"},
		{name: "unknown name", patterns: []string{"echo"}, guard: "nope", guards: word,
			args: map[string]string{"v": "secret"}, want: "secret", setupErr: true},
		{name: "toolset without Guard", patterns: []string{"echo"}, guard: "word",
			args: map[string]string{"v": "secret"}, want: "secret", setupErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var setupErr error
			var ts agent.Toolset = agent.NewToolset("skills", setupTool(tc.patterns, tc.guard, &setupErr))
			if tc.guards != nil {
				ts = guardingToolset{Toolset: ts, guards: tc.guards}
			}
			model := llm.NewScripted(llm.Calls(llm.CallTool("s1", "setup", map[string]any{})),
				llm.Calls(llm.CallTool("e1", "echo", tc.args)), llm.Say("done"))
			a := newAgent(t, agent.Config{Model: model, Tools: []agent.Tool{echoTool("echo", nil)}, Toolsets: []agent.Toolset{ts}})
			sess := a.NewSession()
			evs, err := collect(t, sess.Stream(context.Background(), "go"))
			if err != nil {
				t.Fatal(err)
			}
			if fe := (*failure.Error)(nil); (setupErr != nil) != tc.setupErr || (tc.setupErr && (!errors.As(setupErr, &fe) || fe.Kind != failure.Config)) {
				t.Fatalf("GuardTools: %v, want an error %v", setupErr, tc.setupErr)
			}
			got := toolResult(sess.History(), "e1")
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

func toolResult(hist []llm.Message, id string) string {
	for _, m := range hist {
		for _, r := range m.ToolResults {
			if r.CallID == id {
				return r.Content
			}
		}
	}
	return ""
}

// TestGuardToolsSurviveResume: the guards a tool put over other tools are
// kept in the run's checkpoint by name; a run parked on a question and
// resumed by another agent (another process) whose toolset resolves the
// names has them again, and one whose toolset does not fails to resume
// (Config) rather than run the tools unguarded. The session record does not
// keep the guarded grant (it cannot keep the guards).
func TestGuardToolsSurviveResume(t *testing.T) {
	for _, tc := range []struct {
		name   string
		guards map[string]agent.Guard // of the resuming agent's toolset
		fail   bool
	}{
		{name: "resolved", guards: map[string]agent.Guard{"word": wordGuard{}}},
		{name: "unknown", guards: map[string]agent.Guard{}, fail: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testkit.Ctx(t, 20*time.Second)
			st := agent.NewMemoryStore(agent.MemoryStoreOptions{})
			pay := tool("pay", func(context.Context, json.RawMessage) (*agent.Result, error) { return agent.TextResult("paid"), nil })
			mk := func(guards map[string]agent.Guard, model llm.Model) *agent.Agent {
				var setupErr error
				ts := guardingToolset{Toolset: agent.NewToolset("skills", setupTool([]string{"echo"}, "word", &setupErr)), guards: guards}
				a, err := agent.New(ctx, agent.Config{Name: "guarded", Model: model, Toolsets: []agent.Toolset{ts},
					Tools:       []agent.Tool{pay, echoTool("echo", nil)},
					Permissions: &agent.Permissions{Rules: []agent.Rule{{Tool: "pay", Permission: agent.Ask}, {Tool: "*", Permission: agent.Allow}}},
					Durable:     agent.Durability{Sessions: st, Runs: st, Inbox: st, ParkAfter: -1, QuestionTTL: time.Hour}})
				if err != nil {
					t.Fatal(err)
				}
				return a
			}
			a1 := mk(map[string]agent.Guard{"word": wordGuard{}}, llm.NewScripted(
				llm.Calls(llm.CallTool("s1", "setup", map[string]any{})), llm.Calls(llm.CallTool("p1", "pay", map[string]any{}))))
			s1 := a1.NewSession()
			ans, err := s1.Run(ctx, "go")
			if !errors.Is(err, failure.Parked) || ans == nil || ans.Question == "" {
				t.Fatalf("run: %v, %+v; want Parked", err, ans)
			}
			cp, err := st.LoadCheckpoint(ctx, ans.Run)
			if err != nil || !slices.EqualFunc(cp.Guarded, []agent.GuardedTools{{Toolset: "skills", Patterns: []string{"echo"}, Guards: []string{"word"}}},
				func(a, b agent.GuardedTools) bool {
					return a.Toolset == b.Toolset && slices.Equal(a.Patterns, b.Patterns) && slices.Equal(a.Guards, b.Guards)
				}) {
				t.Fatalf("checkpoint guarded %+v, %v", cp.Guarded, err)
			}
			a2 := mk(tc.guards, llm.NewScripted(llm.Calls(llm.CallTool("e1", "echo", map[string]string{"v": "secret"})), llm.Say("done")))
			final, err := a2.Answer(ctx, ans.Question, agent.ElicitationResult{Action: agent.ElicitAccept})
			if tc.fail {
				if fe := (*failure.Error)(nil); !errors.As(err, &fe) || fe.Kind != failure.Config {
					t.Fatalf("resume without the guard: %v, %+v; want a Config failure", err, final)
				}
				return
			}
			if err != nil || final.Text != "done" {
				t.Fatalf("resume: %v, %+v", err, final)
			}
			rec, err := st.LoadSession(ctx, s1.ID())
			if err != nil {
				t.Fatal(err)
			}
			if got := toolResult(rec.History, "e1"); !strings.Contains(got, "[x]") || strings.Contains(got, "secret") {
				t.Errorf("echo result after the resume %q: not guarded", got)
			}
			if slices.Contains(rec.Grants, "echo") {
				t.Errorf("session record grants %v hold the guarded grant", rec.Grants)
			}
		})
	}
}
