package skills

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/guard"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// TestSkillGuards: the guards a skill declares (metadata switchboard.guards)
// check its read_skill_file results; a skill that declares none is not
// checked; an unknown name is a warning, a refusal under Strict.
func TestSkillGuards(t *testing.T) {
	const email = "alice@example.com"
	for _, tc := range []struct {
		name     string
		meta     string // the metadata block, or ""
		strict   bool
		guards   map[string]agent.Guard
		redacted bool
		warn     bool // a guard-unknown warning
		refused  bool
	}{
		{name: "declared pii", meta: "metadata:\n  switchboard.guards: pii\n", guards: guard.Named(), redacted: true},
		{name: "declared with commas", meta: "metadata:\n  switchboard.guards: \"injection, pii\"\n", guards: guard.Named(), redacted: true},
		{name: "undeclared", guards: guard.Named()},
		{name: "other metadata only", meta: "metadata:\n  author: me\n", guards: guard.Named()},
		{name: "unknown name warns", meta: "metadata:\n  switchboard.guards: \"pii nosuch\"\n", guards: guard.Named(), redacted: true, warn: true},
		{name: "no Config.Guards", meta: "metadata:\n  switchboard.guards: pii\n", warn: true},
		{name: "unknown name refused when strict", meta: "metadata:\n  switchboard.guards: nosuch\n", strict: true, guards: guard.Named(), refused: true},
		{name: "known name strict", meta: "metadata:\n  switchboard.guards: pii\n", strict: true, guards: guard.Named(), redacted: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dir := writeSkill(t, root, "contacts", "name: contacts\ndescription: Look up contacts.\n"+tc.meta, "Read refs/people.md.\n")
			os.MkdirAll(filepath.Join(dir, "refs"), 0o755)
			os.WriteFile(filepath.Join(dir, "refs", "people.md"), []byte("Alice: "+email+"\n"), 0o644)
			ts, err := New(context.Background(), Config{Roots: []Root{{Path: root}}, Strict: tc.strict, Guards: tc.guards})
			if err != nil {
				t.Fatal(err)
			}
			warned := slices.ContainsFunc(ts.Warnings(), func(w Warning) bool { return w.Code == "guard-unknown" })
			if warned != tc.warn {
				t.Errorf("guard-unknown warning %v, want %v: %v", warned, tc.warn, ts.Warnings())
			}
			if _, ok := ts.Skill("contacts"); ok == tc.refused {
				t.Fatalf("skill loaded %v, want %v: %v", ok, !tc.refused, ts.Errors())
			}
			if tc.refused {
				if errs := ts.Errors(); len(errs) != 1 || !strings.Contains(errs[0].Error(), `"nosuch"`) {
					t.Errorf("refusal %v, want one naming the guard", errs)
				}
				return
			}
			res, err := callTool(t, ts, ToolReadFile, map[string]any{"skill": "contacts", "path": "refs/people.md"})
			if err != nil {
				t.Fatal(err)
			}
			text := res.Parts[0].Text
			if got := !strings.Contains(text, email) && strings.Contains(text, "[REDACTED:email]"); got != tc.redacted {
				t.Errorf("read_skill_file result %q: redacted %v, want %v", text, got, tc.redacted)
			}
		})
	}
}

// TestSkillGuardsOverAllowedTools runs a real agent: a tool the skill's
// allowed-tools grant is checked by the skill's guards once the skill is
// activated in the session, not before, and a tool it does not grant is
// never checked.
func TestSkillGuardsOverAllowedTools(t *testing.T) {
	root := t.TempDir()
	writeSkill(t, root, "crm",
		"name: crm\ndescription: Customer records.\nallowed-tools: crm_lookup\nmetadata:\n  switchboard.guards: pii\n",
		"Contact bob@example.com for access.\n")
	ts, err := New(context.Background(), Config{Roots: []Root{{Path: root}}, Guards: guard.Named()})
	if err != nil {
		t.Fatal(err)
	}
	lookup := func(name string) agent.Tool {
		return agent.NewFuncTool(agent.ToolSpec{Name: name, Description: name, ReadOnly: true},
			func(context.Context, json.RawMessage) (*agent.Result, error) {
				return agent.TextResult("owner: carol@example.com"), nil
			})
	}
	model := llm.NewScripted(
		llm.Calls(llm.CallTool("l0", "crm_lookup", map[string]any{})),
		llm.Calls(llm.CallTool("a1", ToolActivate, map[string]any{"name": "crm"})),
		llm.Calls(llm.CallTool("l1", "crm_lookup", map[string]any{}), llm.CallTool("o1", "other_lookup", map[string]any{})),
		llm.Say("done"),
	)
	a, err := agent.New(context.Background(), agent.Config{Model: model, Toolsets: []agent.Toolset{ts},
		Tools: []agent.Tool{lookup("crm_lookup"), lookup("other_lookup")}})
	if err != nil {
		t.Fatal(err)
	}
	sess := a.NewSession()
	if _, err := sess.Run(context.Background(), "who owns it?"); err != nil {
		t.Fatal(err)
	}
	res := results(sess)
	for _, tc := range []struct {
		id, want, not string
	}{
		{"l0", "carol@example.com", "REDACTED"},       // before activation
		{"a1", "[REDACTED:email]", "bob@example.com"}, // the skill's own tool
		{"l1", "[REDACTED:email]", "carol@example.com"},
		{"o1", "carol@example.com", "REDACTED"}, // not granted
	} {
		c := res[tc.id].Content
		if !strings.Contains(c, tc.want) || strings.Contains(c, tc.not) {
			t.Errorf("%s: %q; want %q and not %q", tc.id, c, tc.want, tc.not)
		}
	}
}

// TestSkillGuardsSurviveResume: a run that activated a skill and parked on
// a question is resumed by another agent with its own skills toolset (as
// another process would): the tools the skill's allowed-tools grant are
// still checked by its guards (resolved again by name, Toolset.Guard).
func TestSkillGuardsSurviveResume(t *testing.T) {
	root := t.TempDir()
	writeSkill(t, root, "crm",
		"name: crm\ndescription: Customer records.\nallowed-tools: crm_lookup\nmetadata:\n  switchboard.guards: pii\n",
		"Look people up.\n")
	st := agent.NewMemoryStore(agent.MemoryStoreOptions{})
	mk := func(model llm.Model) *agent.Agent {
		ts, err := New(context.Background(), Config{Roots: []Root{{Path: root}}, Guards: guard.Named()})
		if err != nil {
			t.Fatal(err)
		}
		tools := []agent.Tool{
			agent.NewFuncTool(agent.ToolSpec{Name: "crm_lookup", Description: "lookup", ReadOnly: true},
				func(context.Context, json.RawMessage) (*agent.Result, error) {
					return agent.TextResult("owner: carol@example.com"), nil
				}),
			agent.NewFuncTool(agent.ToolSpec{Name: "pay", Description: "pay"},
				func(context.Context, json.RawMessage) (*agent.Result, error) { return agent.TextResult("paid"), nil }),
		}
		a, err := agent.New(context.Background(), agent.Config{Name: "crm", Model: model, Toolsets: []agent.Toolset{ts}, Tools: tools,
			Permissions: &agent.Permissions{Rules: []agent.Rule{{Tool: "pay", Permission: agent.Ask}, {Tool: "*", Permission: agent.Allow}}},
			Durable:     agent.Durability{Sessions: st, Runs: st, Inbox: st, ParkAfter: -1, QuestionTTL: time.Hour}})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	a1 := mk(llm.NewScripted(
		llm.Calls(llm.CallTool("a1", ToolActivate, map[string]any{"name": "crm"})),
		llm.Calls(llm.CallTool("p1", "pay", map[string]any{}))))
	sess := a1.NewSession()
	ans, err := sess.Run(context.Background(), "pay carol")
	if !errors.Is(err, failure.Parked) {
		t.Fatalf("run: %v, %+v; want Parked", err, ans)
	}
	a2 := mk(llm.NewScripted(llm.Calls(llm.CallTool("l1", "crm_lookup", map[string]any{})), llm.Say("done")))
	if _, err := a2.Answer(context.Background(), ans.Question, agent.ElicitationResult{Action: agent.ElicitAccept}); err != nil {
		t.Fatal(err)
	}
	rec, err := st.LoadSession(context.Background(), sess.ID())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range rec.History {
		for _, r := range m.ToolResults {
			if r.CallID == "l1" && (!strings.Contains(r.Content, "[REDACTED:email]") || strings.Contains(r.Content, "carol@")) {
				t.Errorf("crm_lookup after the resume: %q; want it redacted", r.Content)
			}
		}
	}
}
