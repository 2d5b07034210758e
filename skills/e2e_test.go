package skills

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// asker records permission questions and answers them with action.
type asker struct {
	mu     sync.Mutex
	asked  []agent.Elicitation
	action agent.ElicitAction
}

func (a *asker) Elicit(_ context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, e)
	return agent.ElicitationResult{Action: a.action}, nil
}

func (a *asker) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.asked)
}

func localTool(name string, destructive bool) agent.Tool {
	return agent.NewFuncTool(agent.ToolSpec{Name: name, Description: name, Destructive: destructive},
		func(context.Context, json.RawMessage) (*agent.Result, error) {
			return agent.TextResult(name + " ran"), nil
		})
}

// results returns the tool results of the session's history by call id.
func results(s *agent.Session) map[string]llm.ToolResult {
	out := map[string]llm.ToolResult{}
	for _, m := range s.History() {
		for _, r := range m.ToolResults {
			out[r.CallID] = r
		}
	}
	return out
}

// TestAgentEndToEnd runs a real agent over a scripted model: it activates a
// skill, reads one of its files, and shows allowed-tools turning an "ask"
// into "allow" for the rest of the session without overriding a "deny".
func TestAgentEndToEnd(t *testing.T) {
	root := t.TempDir()
	dir := writeSkill(t, root, "release-notes",
		"name: release-notes\ndescription: Write release notes from the changelog.\nallowed-tools: files_write files_delete Bash(rm -rf:*)\n",
		"# Release notes\n\nRead [the guide](references/guide.md), then write the notes.\n")
	os.MkdirAll(filepath.Join(dir, "references"), 0o755)
	os.WriteFile(filepath.Join(dir, "references", "guide.md"), []byte("Group changes by kind."), 0o644)
	ts, err := New(context.Background(), Config{Roots: []Root{{Path: root}}})
	if err != nil {
		t.Fatal(err)
	}
	var system string
	model := llm.NewScripted(
		llm.React(func(req *llm.Request) llm.Step {
			system = req.System
			return llm.Calls(llm.CallTool("w0", "files_write", map[string]any{}))
		}),
		llm.Calls(llm.CallTool("a1", ToolActivate, map[string]any{"name": "release-notes"}),
			llm.CallTool("r1", ToolReadFile, map[string]any{"skill": "release-notes", "path": "references/guide.md"})),
		llm.Calls(llm.CallTool("w1", "files_write", map[string]any{}), llm.CallTool("d1", "files_delete", map[string]any{})),
		llm.Say("done"),
	)
	ask := &asker{action: agent.ElicitDecline}
	a, err := agent.New(context.Background(), agent.Config{
		Model: model, Toolsets: []agent.Toolset{ts}, Elicitor: ask,
		Tools:       []agent.Tool{localTool("files_write", true), localTool("files_delete", true)},
		Permissions: &agent.Permissions{Rules: []agent.Rule{{Tool: "files_delete", Permission: agent.Deny}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	sess := a.NewSession()
	ans, err := sess.Run(context.Background(), "write the release notes")
	if err != nil {
		t.Fatal(err)
	}
	if ans.Text != "done" {
		t.Errorf("answer %q", ans.Text)
	}
	if !strings.Contains(system, "<available_skills>") || !strings.Contains(system, "<name>release-notes</name>") {
		t.Errorf("system prompt lacks the catalog: %q", system)
	}
	res := results(sess)
	check := func(id string, isErr bool, want string) {
		t.Helper()
		r := res[id]
		if r.IsError != isErr || !strings.Contains(r.Content, want) {
			t.Errorf("%s: error=%v %q; want error=%v and %q", id, r.IsError, r.Content, isErr, want)
		}
	}
	check("w0", true, "declined")                           // before activation: asked, declined
	check("a1", false, "Skill \"release-notes\" is active") // activation
	check("a1", false, "Pre-approved tools for this session (allowed-tools): files_write files_delete")
	check("a1", false, "references/guide.md")
	check("r1", false, "Group changes by kind.")
	check("w1", false, "files_write ran") // pre-approved: not asked
	check("d1", true, "denies")           // deny still wins
	if n := ask.count(); n != 1 {
		t.Errorf("%d permission questions, want 1 (only before activation)", n)
	}
	if !strings.Contains(res["a1"].Content, `source="skills:skills:activate_skill"`) {
		t.Errorf("provenance missing: %q", res["a1"].Content)
	}
}

func writeScript(t *testing.T, dir, name, body string) {
	t.Helper()
	os.MkdirAll(filepath.Join(dir, "scripts"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, "scripts", name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestScripts runs bundled scripts through a real agent: an explicit
// permission ask each time, no shell, scrubbed environment, skill folder as
// working directory, output cap, and the process group killed on timeout.
func TestScripts(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	t.Setenv("SWITCHBOARD_TEST_SECRET", "hunter2")
	root := t.TempDir()
	dir := writeSkill(t, root, "tools", "name: tools\ndescription: Scripts.\n", "Run scripts/hello.sh.\n")
	writeScript(t, dir, "hello.sh", "echo \"args:$1|$2\"\npwd\nenv\n")
	writeScript(t, dir, "loud.sh", "i=0; while [ $i -lt 2000 ]; do echo 0123456789; i=$((i+1)); done; exit 3\n")
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	writeScript(t, dir, "hang.sh", "sleep 60 &\necho $! > "+pidFile+"\nwait\n")
	os.WriteFile(filepath.Join(dir, "scripts", "plain.txt"), []byte("not a script"), 0o644)

	ts, err := New(context.Background(), Config{Roots: []Root{{Path: root}}, Scripts: true, ScriptOutputBytes: 2000})
	if err != nil {
		t.Fatal(err)
	}
	// A second toolset over the same folder with a short timeout, for the
	// script that hangs (the others get the default minute, so a slow
	// machine does not fail them).
	tsShort, err := New(context.Background(), Config{Roots: []Root{{Path: root}}, Scripts: true, ScriptTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ask := &asker{action: agent.ElicitAccept}
	run := func(calls ...llm.ToolCall) map[string]llm.ToolResult {
		return runWith(t, ts, ask, calls...)
	}

	res := run(
		llm.CallTool("h", ToolRunScript, map[string]any{"skill": "tools", "path": "scripts/hello.sh", "args": []string{"a b", "$HOME;rm"}}),
		llm.CallTool("l", ToolRunScript, map[string]any{"skill": "tools", "path": "scripts/loud.sh"}),
		llm.CallTool("p", ToolRunScript, map[string]any{"skill": "tools", "path": "scripts/plain.txt"}),
		llm.CallTool("x", ToolRunScript, map[string]any{"skill": "tools", "path": "../tools/scripts/hello.sh"}),
	)
	h := res["h"].Content
	if res["h"].IsError || !strings.Contains(h, "args:a b|$HOME;rm") || !strings.Contains(h, "exit status: 0") {
		t.Errorf("hello: %q", h)
	}
	if !strings.Contains(h, "\n"+dir+"\n") && !strings.Contains(h, "/"+filepath.Base(dir)+"\n") {
		t.Errorf("working directory is not the skill folder: %q", h)
	}
	if strings.Contains(h, "hunter2") || !strings.Contains(h, "SKILL_DIR=") || !strings.Contains(h, "PATH=") {
		t.Errorf("environment not scrubbed: %q", h)
	}
	if l := res["l"]; !l.IsError || !strings.Contains(l.Content, "exit status: 3") || !strings.Contains(l.Content, "[output cut: 20000 more bytes not shown]") {
		t.Errorf("loud: %q", l.Content)
	}
	if p := res["p"]; !p.IsError || !strings.Contains(p.Content, "not an executable file") {
		t.Errorf("plain: %q", p.Content)
	}
	if x := res["x"]; !x.IsError || !strings.Contains(x.Content, "not allowed") {
		t.Errorf("traversal: %q", x.Content)
	}
	if n := ask.count(); n != 2 {
		t.Errorf("%d permission asks, want 2 (one per script that could run)", n)
	}
	for _, e := range ask.asked { // the calls ran in parallel: any order
		if e.Kind != agent.ElicitPermission || e.Source.Kind != failure.SourceSkill || e.Source.Name != "tools" || e.Tool != ToolRunScript ||
			!(strings.Contains(e.Message, "scripts/hello.sh") || strings.Contains(e.Message, "scripts/loud.sh")) {
			t.Errorf("ask %+v", e)
		}
	}

	// Declined.
	ask.action = agent.ElicitDecline
	res = run(llm.CallTool("d", ToolRunScript, map[string]any{"skill": "tools", "path": "scripts/hello.sh"}))
	if d := res["d"]; !d.IsError || !strings.Contains(d.Content, "declined") || strings.Contains(d.Content, "args:") {
		t.Errorf("declined: %q", d.Content)
	}

	// Timeout: the whole process group is killed.
	ask.action = agent.ElicitAccept
	res = runWith(t, tsShort, ask, llm.CallTool("t", ToolRunScript, map[string]any{"skill": "tools", "path": "scripts/hang.sh"}))
	if r := res["t"]; !r.IsError || !strings.Contains(r.Content, "timeout") {
		t.Errorf("hang: %q", r.Content)
	}
	pidData, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	for _, c := range strings.TrimSpace(string(pidData)) {
		pid = pid*10 + int(c-'0')
	}
	// The kill is asynchronous: wait for the kernel to reap the child.
	gone := func() bool { return syscall.Kill(pid, 0) != nil }
	t.Cleanup(func() {
		if !gone() {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	testkit.WaitFor(t, 20*time.Second, "the background child to be gone after the timeout (it survived)", gone)
}

// runWith runs one agent turn of calls over ts and returns the results.
func runWith(t *testing.T, ts *Toolset, ask *asker, calls ...llm.ToolCall) map[string]llm.ToolResult {
	t.Helper()
	a, err := agent.New(context.Background(), agent.Config{
		Model: llm.NewScripted(llm.Calls(calls...), llm.Say("ok")), Toolsets: []agent.Toolset{ts}, Elicitor: ask,
		// Executes tools are denied by default: the operator opts in; the
		// tool then asks for each run itself.
		Permissions: &agent.Permissions{Rules: []agent.Rule{{Tool: ToolRunScript, Permission: agent.Allow}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := a.NewSession()
	if _, err := s.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	return results(s)
}
