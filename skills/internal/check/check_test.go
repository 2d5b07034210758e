package check

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var quirks = filepath.Join("..", "..", "testdata", "quirks")

func findingCodes(r *Report) []Code {
	var out []Code
	for _, f := range r.Findings {
		out = append(out, f.Code)
	}
	return out
}

func find(r *Report, c Code) (Finding, bool) {
	for _, f := range r.Findings {
		if f.Code == c {
			return f, true
		}
	}
	return Finding{}, false
}

// TestSeverities: the same deviation is a warning in lenient mode and an
// error in strict mode; unknown fields are hints, then errors; broken links
// are errors in both; hints never fail a check.
func TestSeverities(t *testing.T) {
	tests := []struct {
		folder          string
		code            Code
		lenient         Severity
		strict          Severity
		failed, failedS bool
	}{
		{"name-mismatch", "name-mismatch", SeverityWarning, SeverityError, false, true},
		{"booleans", "unknown-field", SeverityHint, SeverityError, false, true},
		{"bom", "bom", SeverityWarning, SeverityWarning, false, true},
		{"links", "link-missing", SeverityError, SeverityError, true, true},
		{"nul", codeBinary, SeverityError, SeverityError, true, true},
		{"clean", codeDescriptionWhen, SeverityHint, SeverityHint, false, false},
		{"long-body", codeBodyLong, SeverityWarning, SeverityWarning, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.folder, func(t *testing.T) {
			for _, strict := range []bool{false, true} {
				r, err := checkDir(context.Background(), filepath.Join(quirks, tc.folder), Options{Strict: strict})
				if err != nil {
					t.Fatal(err)
				}
				f, ok := find(r, tc.code)
				want, failed := tc.lenient, tc.failed
				if strict {
					want, failed = tc.strict, tc.failedS
				}
				if !ok || f.Severity != want {
					t.Errorf("strict=%v: %s is %q (found %v), want %q; findings %v", strict, tc.code, f.Severity, ok, want, r.Findings)
				}
				if r.Failed() != failed {
					t.Errorf("strict=%v: Failed() = %v, want %v", strict, r.Failed(), failed)
				}
			}
		})
	}
}

// TestPaths: files are named as reached from the directory given, and
// the report counts what it holds.
func TestPaths(t *testing.T) {
	dir := filepath.Join(quirks, "links")
	r, err := checkDir(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Skills) != 1 || r.Skills[0].File != filepath.Join(dir, "SKILL.md") || r.Skills[0].Files != 2 || r.Skills[0].BodyLines != 7 {
		t.Errorf("skills %+v", r.Skills)
	}
	f, _ := find(r, "link-case")
	if f.File != filepath.Join(dir, "SKILL.md") || f.Line != 7 || f.Skill != "links" {
		t.Errorf("finding %+v", f)
	}
	want := dir + string(filepath.Separator) + "SKILL.md:7: error: link \"references/Guide.md\" differs in case"
	if !strings.HasPrefix(f.String(), want) || !strings.HasSuffix(f.String(), " [link-case]") {
		t.Errorf("String() = %q", f.String())
	}
	if r.Errors != 3 || r.Warnings != 0 || r.Hints != 1 {
		t.Errorf("counts %d %d %d: %v", r.Errors, r.Warnings, r.Hints, r.Findings)
	}
}

// TestDirs: several directories are roots in precedence order (a shadowed
// skill is reported); an empty one is an error; a missing one or a file
// cannot be checked.
func TestDirs(t *testing.T) {
	ctx := context.Background()
	roots := filepath.Join("..", "..", "testdata", "roots")
	r, err := Dirs(ctx, []string{filepath.Join(roots, "high"), filepath.Join(roots, "low")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := find(r, "shadowed"); !ok || f.Severity != SeverityWarning || !strings.Contains(f.File, filepath.Join("low", "dup")) {
		t.Errorf("shadowed %+v in %v", f, r.Findings)
	}
	if _, ok := find(r, codeNoSkills); ok {
		t.Errorf("no-skills with skills: %v", r.Findings)
	}
	empty := t.TempDir()
	r, err = Dirs(ctx, []string{empty}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := find(r, codeNoSkills); !ok || f.File != empty || !r.Failed() {
		t.Errorf("empty dir: %v", r.Findings)
	}
	if _, err := checkDir(ctx, filepath.Join(empty, "missing"), Options{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing dir: %v", err)
	}
	if _, err := checkDir(ctx, filepath.Join(quirks, "clean", "SKILL.md"), Options{}); !errors.Is(err, errNotDir) {
		t.Errorf("file: %v", err)
	}
	if _, err := Dirs(ctx, nil, Options{}); err == nil {
		t.Error("no directory accepted")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := checkDir(cancelled, quirks, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestOptions: the body limits and the catalog budget are the caller's.
func TestOptions(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(quirks, "clean")
	r, err := checkDir(ctx, dir, Options{MaxBodyLines: 1, MaxBodyTokens: 100_000})
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := find(r, codeBodyLong); !ok || f.Line != 10 || !strings.Contains(f.Message, "under 1 lines") {
		t.Errorf("body-long %+v", f)
	}
	r, err = checkDir(ctx, quirks, Options{CatalogBudget: 600})
	if err != nil {
		t.Fatal(err)
	}
	f, ok := find(r, codeCatalogCut)
	if !ok || f.Severity != SeverityHint || !strings.Contains(f.Message, "budget of 600") {
		t.Errorf("catalog-cut %+v", f)
	}
	if got := r.Toolset().Instructions(ctx); len(got) > 600 {
		t.Errorf("catalog of %d characters over its budget", len(got))
	}
	if r, _ = checkDir(ctx, quirks, Options{}); slices.Contains(findingCodes(r), codeCatalogCut) {
		t.Errorf("catalog-cut with the default budget")
	}
}

// TestScriptModes covers the run bit and the #! line, created here so
// that the modes do not depend on the checkout.
func TestScriptModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "scripts-skill")
	write := func(name, data string, mode os.FileMode) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
	}
	write("SKILL.md", "---\nname: scripts-skill\ndescription: Scripts. Use when testing.\n---\nRun `scripts/`, tools/run and lib/x.py.\n", 0o644)
	write("scripts/ok.sh", "#!/bin/sh\n", 0o755)
	write("scripts/bare", "echo hi\n", 0o755)
	write("scripts/data.csv", "a,b\n", 0o644)
	write("tools/run", "#!/bin/sh\n", 0o644)
	write("lib/x.py", "import os\n", 0o644)
	r, err := checkDir(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]Code{}
	for _, f := range r.Findings {
		rel, _ := filepath.Rel(dir, f.File)
		got[filepath.ToSlash(rel)] = append(got[filepath.ToSlash(rel)], f.Code)
	}
	want := map[string][]Code{"scripts/bare": {codeScriptNoShebang}, "tools/run": {codeScriptNotExecutable}}
	if len(got) != len(want) {
		t.Errorf("findings %v, want %v", got, want)
	}
	for k, v := range want {
		if !slices.Equal(got[k], v) {
			t.Errorf("%s: %v, want %v", k, got[k], v)
		}
	}
}
