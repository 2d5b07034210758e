package skilltest

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/skills"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	corpus   = filepath.Join("..", "testdata")
	examples = filepath.Join("..", "..", "examples", "skills", "skills")
)

// recorder is a testing.TB that records what the helpers report; Fatalf
// ends the goroutine, as testing.T's does. The helpers call only the
// methods it defines (the embedded nil TB would panic otherwise).
type recorder struct {
	testing.TB
	mu       sync.Mutex
	errors   []string
	fatal    string
	logs     int
	cleanups []func()
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, a ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, a...))
}
func (r *recorder) Fatalf(format string, a ...any) {
	r.mu.Lock()
	r.fatal = fmt.Sprintf(format, a...)
	r.mu.Unlock()
	runtime.Goexit()
}
func (r *recorder) Logf(string, ...any) { r.logs++ }
func (r *recorder) Cleanup(f func())    { r.cleanups = append(r.cleanups, f) }

// do runs f with r as its testing.TB in a goroutine (so that Fatalf can end it),
// then the cleanups.
func (r *recorder) do(f func(testing.TB)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	for _, c := range r.cleanups {
		c()
	}
}

// TestRequire: which findings fail a test, leniently and strictly.
func TestRequire(t *testing.T) {
	tests := []struct {
		dir    string
		strict bool
		errors []string // codes of the failures, in order
		fatal  string
		logged bool
	}{
		{dir: examples, strict: true},
		{dir: filepath.Join(corpus, "quirks", "clean"), logged: true},
		{dir: filepath.Join(corpus, "quirks", "bom")},
		{dir: filepath.Join(corpus, "quirks", "bom"), strict: true, errors: []string{"[bom]"}},
		{dir: filepath.Join(corpus, "quirks", "name-mismatch"), strict: true, errors: []string{"[name-mismatch, spec]"}},
		{dir: filepath.Join(corpus, "quirks", "links"), errors: []string{"[link-case]", "[link-missing]", "[link-outside]"}},
		{dir: filepath.Join(corpus, "malicious", "skill-file-link"), errors: []string{"[symlink-outside]"}},
		{dir: filepath.Join(corpus, "missing"), fatal: "no such file or directory"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/strict=%v", filepath.Base(tc.dir), tc.strict), func(t *testing.T) {
			var r recorder
			r.do(func(tb testing.TB) {
				if tc.strict {
					RequireStrict(tb, tc.dir)
				} else {
					RequireLoads(tb, tc.dir)
				}
			})
			if len(r.errors) != len(tc.errors) {
				t.Fatalf("errors %q, want %q", r.errors, tc.errors)
			}
			for i, e := range tc.errors {
				if !strings.HasSuffix(r.errors[i], e) || !strings.HasPrefix(r.errors[i], tc.dir) {
					t.Errorf("error %q, want one about %s ending in %s", r.errors[i], tc.dir, e)
				}
			}
			if !strings.Contains(r.fatal, tc.fatal) || (tc.fatal == "") != (r.fatal == "") {
				t.Errorf("fatal %q, want %q", r.fatal, tc.fatal)
			}
			if tc.logged && r.logs == 0 {
				t.Error("hints were not logged")
			}
		})
	}
}

// TestTools: Activate and Read go through the model's tools; their
// failures fail the test; Call returns them; links leaving the folder
// cannot be read.
func TestTools(t *testing.T) {
	s := RequireStrict(t, examples)
	if c := s.Catalog(); !strings.Contains(c, "<skill><name>csv-report</name>") {
		t.Errorf("catalog %q", c)
	}
	if got := s.Activate("csv-report"); !strings.Contains(got, "- scripts/summarize.sh (607 bytes)") || !strings.Contains(got, "# CSV report") {
		t.Errorf("activation %q", got)
	}
	if got := s.Read("csv-report", "assets/example.csv"); !strings.HasPrefix(got, "region,units,revenue\n") {
		t.Errorf("read %q", got)
	}
	if names := s.Names(); len(names) != 2 || !slices.Contains(names, "csv-report") || s.Toolset() == nil {
		t.Errorf("names %v", names)
	}
	if f := s.Findings(); len(f) != 0 {
		t.Errorf("strict skills have findings %v", f)
	}
	links := newSkills(t, filepath.Join(corpus, "quirks", "links"))
	if f := strings.Join(links.Findings(), "\n"); !strings.Contains(f, "error: link \"references/nope.md\" names a file the skill does not bundle [link-missing]") {
		t.Errorf("findings %q", f)
	}
	if _, err := s.Call("run_skill_script", nil); err == nil {
		t.Error("a tool the toolset does not have was called")
	}
	for _, f := range []func(*Skills){
		func(s *Skills) { s.Activate("nope") },
		func(s *Skills) { s.Read("csv-report", "../commit-message/SKILL.md") },
	} {
		var r recorder
		r.do(func(tb testing.TB) { f(newSkills(tb, examples)) })
		if r.fatal == "" {
			t.Error("a failing tool call did not fail the test")
		}
	}

	m := newSkills(t, filepath.Join(corpus, "malicious"))
	for _, p := range []string{"references/notes.md", "data/canary.txt", "passwd", ".hidden-link"} {
		res, err := m.Call(skills.ToolReadFile, map[string]any{"skill": "symlink-escape", "path": p})
		if err == nil {
			t.Errorf("%s read: %s", p, res.Text())
			continue
		}
		if !errors.Is(err, failure.InvalidArgs) || strings.Contains(err.Error(), "SECRET-CANARY") {
			t.Errorf("%s: %v", p, err)
		}
	}
}
