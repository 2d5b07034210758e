package check

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzDir checks a skill folder whose SKILL.md is any input: the check
// never panics nor fails, names only files inside the folder, and gives
// lines within the file.
func FuzzDir(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "*", "*", "SKILL.md"))
	for _, p := range paths {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("---\nname: f\ndescription: d\nallowed-tools: Bash(x:*) *\n---\n[a](a.md) `scripts/` ../x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := filepath.Join(t.TempDir(), "f")
		if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "SKILL.md"), data, 0o644)
		os.WriteFile(filepath.Join(dir, "scripts", "run.sh"), []byte("echo\n"), 0o644)
		text := strings.ReplaceAll(strings.ReplaceAll(string(data), "\r\n", "\n"), "\r", "\n")
		lines := strings.Count(text, "\n") + 1
		for _, strict := range []bool{false, true} {
			r, err := checkDir(context.Background(), dir, Options{Strict: strict})
			if err != nil {
				t.Fatal(err)
			}
			for _, fd := range r.Findings {
				if fd.File != dir && !strings.HasPrefix(fd.File, dir+string(filepath.Separator)) {
					t.Fatalf("finding outside the folder: %+v", fd)
				}
				if fd.Line < 0 || fd.Line > lines+1 || fd.Severity == "" || fd.Code == "" || fd.Message == "" {
					t.Fatalf("bad finding %+v (%d lines)", fd, lines)
				}
			}
			if r.Errors+r.Warnings+r.Hints != len(r.Findings) {
				t.Fatalf("counts %d+%d+%d of %d findings", r.Errors, r.Warnings, r.Hints, len(r.Findings))
			}
		}
	})
}
