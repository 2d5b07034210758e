package skills

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSymlinkedFolders: symbolic links to skill folders are followed and
// each folder is loaded once, whichever root reaches it; a link loop ends.
func TestSymlinkedFolders(t *testing.T) {
	base := t.TempDir()
	project, user, elsewhere := filepath.Join(base, "project"), filepath.Join(base, "user"), filepath.Join(base, "elsewhere")
	for _, d := range []string{project, user, elsewhere} {
		os.MkdirAll(d, 0o755)
	}
	writeSkill(t, elsewhere, "linked", "name: linked\ndescription: Lives outside the roots.\n", "Body.\n")
	if err := os.Symlink(filepath.Join(elsewhere, "linked"), filepath.Join(project, "linked")); err != nil {
		t.Skip("symlinks unavailable:", err)
	}
	os.Symlink(filepath.Join(elsewhere, "linked"), filepath.Join(user, "linked-again"))
	os.Symlink(project, filepath.Join(project, "loop"))
	os.Symlink(filepath.Join(base, "missing"), filepath.Join(project, "broken"))

	ts, err := New(context.Background(), Config{Roots: []Root{{Path: project}, {Path: user}}})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(ts.Skills()); n != 1 {
		t.Fatalf("%d skills, want 1: %v", n, ts.Skills())
	}
	if len(ts.Shadowed()) != 0 {
		t.Errorf("the same folder reached twice is not shadowing: %v", ts.Shadowed())
	}
	found := false
	for _, w := range ts.Warnings() {
		if w.Code == string(warnDiscovery) && filepath.Base(w.File) == "broken" {
			found = true
		}
	}
	if !found {
		t.Errorf("broken link not reported: %v", ts.Warnings())
	}
	a, err := ts.Activate(context.Background(), "linked")
	if err != nil || a.Body.Markdown != "Body.\n" {
		t.Fatalf("activate through a link: %v %v", a, err)
	}
}

// TestBodyRefused: the body is read on activation, so a NUL byte or
// invalid UTF-8 after the frontmatter refuses the activation.
func TestBodyRefused(t *testing.T) {
	root := t.TempDir()
	writeSkill(t, root, "nul-body", "name: nul-body\ndescription: d\n", "text\x00more\n")
	writeSkill(t, root, "latin1-body", "name: latin1-body\ndescription: d\n", "caf\xe9\n")
	ts, err := New(context.Background(), Config{Roots: []Root{{Path: root}}})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]error{"nul-body": errBinary, "latin1-body": errNotUTF8} {
		if _, err := ts.Activate(context.Background(), name); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", name, err, want)
		}
	}
}

// TestSkillFileLink: a SKILL.md that is a symbolic link is read through its
// folder's os.Root: a link inside the folder loads, a link leaving it is
// refused with errOutside and never read.
func TestSkillFileLink(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "SKILL.md")
	os.WriteFile(secret, []byte("---\nname: escape\ndescription: SECRET-CANARY\n---\n"), 0o644)
	for _, d := range []string{"escape", "inside"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	if err := os.Symlink(secret, filepath.Join(root, "escape", "SKILL.md")); err != nil {
		t.Skip("symlinks unavailable:", err)
	}
	os.WriteFile(filepath.Join(root, "inside", "real.md"), []byte("---\nname: inside\ndescription: Linked inside.\n---\nBody.\n"), 0o644)
	os.Symlink("real.md", filepath.Join(root, "inside", "SKILL.md"))
	ts, err := New(context.Background(), Config{Roots: []Root{{Path: root}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ts.Skill("inside"); !ok {
		t.Errorf("a SKILL.md linked inside its folder was not loaded: %v", ts.Errors())
	}
	if _, ok := ts.Skill("escape"); ok {
		t.Error("a SKILL.md linked outside its folder was loaded")
	}
	errs := ts.Errors()
	if len(errs) != 1 || !errors.Is(errs[0], errOutside) {
		t.Fatalf("errors %v, want one errOutside", errs)
	}
	if r, ok := RefusalOf(errs[0]); !ok || r.Reason != errOutside || filepath.Base(filepath.Dir(r.File)) != "escape" {
		t.Errorf("refusal %+v", r)
	}
	if c := ts.Instructions(context.Background()); strings.Contains(c, "SECRET-CANARY") {
		t.Errorf("the outside file was read: %s", c)
	}
}
