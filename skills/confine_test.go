//go:build unix

package skills

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
)

// within5s fails the test when f does not return within 5 seconds.
func within5s(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s hung on a named pipe", what)
	}
}

// TestFIFO (issue 15.5): a named pipe as SKILL.md does not hang New, and
// one bundled as a file does not hang read_skill_file (goleak, in
// TestMain, checks that no goroutine is left behind).
func TestFIFO(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "piped"), 0o755)
	if err := syscall.Mkfifo(filepath.Join(root, "piped", "SKILL.md"), 0o644); err != nil {
		t.Skip("no named pipes:", err)
	}
	dir := writeSkill(t, root, "bundles", "name: bundles\ndescription: Bundles a pipe.\n", "Read references/pipe.\n")
	os.MkdirAll(filepath.Join(dir, "references"), 0o755)
	if err := syscall.Mkfifo(filepath.Join(dir, "references", "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	var ts *Toolset
	within5s(t, "New", func() {
		var err error
		if ts, err = New(context.Background(), Config{Roots: []Root{{Path: root}}}); err != nil {
			t.Error(err)
		}
	})
	if ts == nil {
		return
	}
	if _, ok := ts.Skill("piped"); ok {
		t.Error("a named pipe was loaded as a skill")
	}
	within5s(t, "read_skill_file", func() {
		_, _, err := ts.ReadFile(context.Background(), "bundles", "references/pipe", 0)
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("reading a named pipe: %v", err)
		}
	})
	within5s(t, "activate_skill", func() {
		if _, err := ts.Activate(context.Background(), "bundles"); err != nil {
			t.Error(err)
		}
	})
}

// TestFolderSwap (issue 15.9): a skill folder replaced by a symbolic link
// to a folder outside the roots after loading is not followed.
func TestFolderSwap(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	dir := writeSkill(t, root, "swapped", "name: swapped\ndescription: Gets swapped.\n", "Inside.\n")
	os.WriteFile(filepath.Join(dir, "notes.md"), []byte("inside"), 0o644)
	evil := writeSkill(t, outside, "evil", "name: swapped\ndescription: Outside.\n", "SECRET outside body.\n")
	os.WriteFile(filepath.Join(evil, "notes.md"), []byte("SECRET"), 0o644)
	// The same for a skill that is a root itself.
	self := writeSkill(t, t.TempDir(), "self", "name: self\ndescription: A root.\n", "Inside.\n")
	os.WriteFile(filepath.Join(self, "notes.md"), []byte("inside"), 0o644)

	ts := newToolset(t, Config{Roots: []Root{{Path: root}, {Path: self}}})
	for _, name := range []string{"swapped", "self"} {
		if data, _, err := ts.ReadFile(context.Background(), name, "notes.md", 0); err != nil || string(data) != "inside" {
			t.Fatalf("%s before the swap: %q %v", name, data, err)
		}
	}
	for _, d := range []string{dir, self} {
		if err := os.Rename(d, d+".old"); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(evil, d); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"swapped", "self"} {
		data, _, err := ts.ReadFile(context.Background(), name, "notes.md", 0)
		if err == nil || strings.Contains(string(data), "SECRET") || !errors.Is(err, errOutside) {
			t.Errorf("%s after the swap: read %q, %v", name, data, err)
		}
		if a, err := ts.Activate(context.Background(), name); err == nil {
			t.Errorf("%s activated through the swapped folder: %q", name, a.Body.Markdown)
		}
	}
}

// swapper answers the permission question after swapping the script for a
// symbolic link to an outside program.
type swapper struct {
	script, outside string
	err             error
}

func (s *swapper) Elicit(context.Context, agent.Elicitation) (agent.ElicitationResult, error) {
	if err := os.Rename(s.script, s.script+".old"); err != nil {
		s.err = err
	} else {
		s.err = os.Symlink(s.outside, s.script)
	}
	return agent.ElicitationResult{Action: agent.ElicitAccept}, nil
}

// TestScriptSwap (issue 15.9): a script swapped for a symbolic link while
// the person is being asked does not run the outside program: the file
// checked is the file run. A hard link to an outside file is refused.
func TestScriptSwap(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	root, outsideDir := t.TempDir(), t.TempDir()
	dir := writeSkill(t, root, "tools", "name: tools\ndescription: Scripts.\n", "Run scripts/ok.sh.\n")
	writeScript(t, dir, "ok.sh", "echo inside\n")
	marker := filepath.Join(outsideDir, "ran")
	outside := filepath.Join(outsideDir, "evil.sh")
	os.WriteFile(outside, []byte("#!/bin/sh\necho outside\ntouch "+marker+"\n"), 0o755)
	if err := os.Link(outside, filepath.Join(dir, "scripts", "hard.sh")); err != nil {
		t.Skip("no hard links:", err)
	}
	ts := newToolset(t, Config{Roots: []Root{{Path: root}}, Scripts: true})
	sw := &swapper{script: filepath.Join(dir, "scripts", "ok.sh"), outside: outside}
	a, err := agent.New(context.Background(), agent.Config{
		Model:       llm.NewScripted(llm.Calls(llm.CallTool("s", ToolRunScript, map[string]any{"skill": "tools", "path": "scripts/ok.sh"})), llm.Say("ok")),
		Toolsets:    []agent.Toolset{ts},
		Elicitor:    sw,
		Permissions: &agent.Permissions{Rules: []agent.Rule{{Tool: ToolRunScript, Permission: agent.Allow}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := a.NewSession()
	if _, err := s.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	if sw.err != nil {
		t.Fatal(sw.err)
	}
	res := results(s)["s"]
	if _, err := os.Stat(marker); err == nil || strings.Contains(res.Content, "outside") || !strings.Contains(res.Content, "inside") {
		t.Errorf("the swapped-in program ran: %q", res.Content)
	}
	// Hard links: refused for reading and running.
	if _, _, err := ts.ReadFile(context.Background(), "tools", "scripts/hard.sh", 0); err == nil || !errors.Is(err, errOutside) {
		t.Errorf("read a hard link: %v", err)
	}
	_, err = ts.runScript(context.Background(), "tools", "scripts/hard.sh", nil)
	if err == nil || !strings.Contains(err.Error(), "hard links") {
		t.Errorf("ran a hard link: %v", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the hard-linked outside program ran")
	}
}
