package skills

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// waitChanged waits for a change signal; the bound only keeps a broken
// watcher from hanging the test.
func waitChanged(t *testing.T, ts *Toolset, what string) {
	t.Helper()
	select {
	case <-ts.Changed():
	case <-time.After(20 * time.Second):
		t.Fatalf("no change reported after %s", what)
	}
}

func TestWatchHotReload(t *testing.T) {
	root := t.TempDir()
	dir := writeSkill(t, root, "one", "name: one\ndescription: First version.\n", "Body.\n")
	ts, err := New(context.Background(), Config{Roots: []Root{{Path: root}}, Watch: true, Debounce: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	ctx := context.Background()

	os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: one\ndescription: Second version, edited.\n---\nBody.\n"), 0o644)
	waitChanged(t, ts, "an edit")
	if c := ts.Instructions(ctx); !strings.Contains(c, "Second version, edited.") {
		t.Errorf("catalog not updated: %q", c)
	}

	writeSkill(t, root, "two", "name: two\ndescription: Added later.\n", "Body.\n")
	waitChanged(t, ts, "a new skill")
	if _, ok := ts.Skill("two"); !ok {
		// The folder may have been seen before its SKILL.md was written;
		// the write itself is a second event.
		waitChanged(t, ts, "the new SKILL.md")
		if _, ok := ts.Skill("two"); !ok {
			t.Fatal("new skill not loaded")
		}
	}

	os.RemoveAll(dir)
	waitChanged(t, ts, "a removal")
	if _, ok := ts.Skill("one"); ok {
		t.Error("removed skill still loaded")
	}
	if err := ts.Close(); err != nil {
		t.Error(err)
	}
}
