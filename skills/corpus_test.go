package skills

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/failure"
)

func codes(ws []Warning) []skillCode {
	var out []skillCode
	for _, w := range ws {
		out = append(out, skillCode(w.Code))
	}
	return out
}

func loadCorpus(t *testing.T, strict bool) *Toolset {
	t.Helper()
	ts, err := New(context.Background(), Config{Roots: []Root{{Path: filepath.Join("testdata", "quirks")}}, Strict: strict})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ts.Close() })
	return ts
}

// TestCorpus loads every real-world quirk of testdata/quirks leniently and
// checks the warning (with file and line) or the refusal each one gets.
func TestCorpus(t *testing.T) {
	ts := loadCorpus(t, false)
	tests := []struct {
		folder string
		name   string      // skill name when loaded
		want   []skillCode // warnings that must be present
		line   int         // line of the first wanted warning
		err    error       // refusal reason, instead
		errMsg string      // and a piece of its message
		check  func(t *testing.T, s *Skill)
	}{
		{folder: "clean", name: "clean", check: func(t *testing.T, s *Skill) {
			if len(s.Warnings) != 0 {
				t.Errorf("clean skill has warnings: %v", s.Warnings)
			}
			if s.Metadata["version"] != "1.0" || s.License != "Apache-2.0" || len(s.AllowedTools) != 2 {
				t.Errorf("fields: %+v", s)
			}
		}},
		{folder: "bom", name: "bom", want: []skillCode{warnBOM}, line: 1},
		{folder: "crlf", name: "crlf", want: []skillCode{warnCRLF}, line: 1, check: func(t *testing.T, s *Skill) {
			if strings.ContainsRune(s.Description, '\r') {
				t.Errorf("CR kept in %q", s.Description)
			}
		}},
		{folder: "cr-only", name: "cr-only", want: []skillCode{warnCR}, line: 1, check: func(t *testing.T, s *Skill) {
			if s.Description != "Old Mac CR-only line endings." {
				t.Errorf("description %q", s.Description)
			}
		}},
		{folder: "long-description", name: "long-description", want: []skillCode{warnDescriptionLong}, line: 3},
		{folder: "name-mismatch", name: "pdf-tools", want: []skillCode{warnNameMismatch}, line: 2},
		{folder: "allowed-tools-list", name: "allowed-tools-list", want: []skillCode{warnAllowedToolsList}, line: 4, check: func(t *testing.T, s *Skill) {
			if !slices.Equal(s.AllowedTools, []string{"mcp__files__read_file", "Bash(git status:*)"}) {
				t.Errorf("allowed-tools %q", s.AllowedTools)
			}
		}},
		{folder: "nested-metadata", name: "nested-metadata", want: []skillCode{warnMetadataNested}, line: 4, check: func(t *testing.T, s *Skill) {
			if s.Metadata["owner.team"] != "docs" || s.Metadata["author"] != "someone" {
				t.Errorf("metadata %v", s.Metadata)
			}
		}},
		{folder: "unquoted-colon", name: "unquoted-colon", want: []skillCode{warnUnquotedColon}, line: 3, check: func(t *testing.T, s *Skill) {
			if s.Description != "Use when: the user asks about colons" || s.License != "MIT" {
				t.Errorf("fields: %q %q", s.Description, s.License)
			}
		}},
		{folder: "booleans", name: "booleans", want: []skillCode{warnNotString, warnMetadataType}, line: 4, check: func(t *testing.T, s *Skill) {
			if s.License != "false" || s.Metadata["internal"] != "true" || s.Extra["disable-model-invocation"] != false {
				t.Errorf("license %q metadata %v extra %v", s.License, s.Metadata, s.Extra)
			}
		}},
		{folder: "indented-delimiter", name: "indented-delimiter", check: func(t *testing.T, s *Skill) {
			want := "A block scalar that holds a line of three dashes:\n---\nand keeps going after it."
			if s.Description != want {
				t.Errorf("description %q, want %q (an indented --- must not end the frontmatter)", s.Description, want)
			}
		}},
		{folder: "markup", name: "markup", want: []skillCode{warnMarkup}, line: 3},
		{folder: "toml", err: errNotYAML, errMsg: "TOML"},
		{folder: "json", err: errNotYAML, errMsg: "JSON"},
		{folder: "no-frontmatter", err: errNoFrontmatter},
		{folder: "no-description", err: errNoDescription},
		{folder: "unclosed", err: errUnclosed},
		{folder: "bad-yaml", err: errBadYAML, errMsg: "SKILL.md:3"},
		{folder: "nul", err: errBinary, errMsg: "SKILL.md:3"},
		{folder: "non-utf8", err: errNotUTF8, errMsg: "SKILL.md:3"},
		// Issue 17.3: only a name or description that cannot be had
		// refuses a skill.
		{folder: "surrogates", name: "surrogates", check: func(t *testing.T, s *Skill) {
			if s.Description != "Telescope \U0001F52D in JSON style. Use when reading the sky." || s.Metadata["icon"] != "\U0001F52D" {
				t.Errorf("surrogate pairs: %q %q", s.Description, s.Metadata)
			}
		}},
		{folder: "multiline-colon", name: "multiline-colon", want: []skillCode{warnUnquotedColon}, line: 3, check: func(t *testing.T, s *Skill) {
			if s.Description != "Reviews pull requests. Use when the user says: review this, or asks for a second look." || s.License != "MIT" {
				t.Errorf("fields: %q %q", s.Description, s.License)
			}
		}},
		{folder: "bad-optional", name: "bad-optional", want: []skillCode{warnFieldDropped}, line: 4, check: func(t *testing.T, s *Skill) {
			if s.Metadata != nil || s.Compatibility != "Any." {
				t.Errorf("fields: %q %q", s.Metadata, s.Compatibility)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.folder, func(t *testing.T) {
			file := filepath.Join(ts.cfg.Roots[0].Path, tc.folder, "SKILL.md")
			if tc.err != nil {
				var found error
				for _, e := range ts.Errors() {
					if strings.Contains(e.Error(), file) {
						found = e
					}
				}
				if found == nil {
					t.Fatalf("no error for %s; errors: %v", file, ts.Errors())
				}
				if !errors.Is(found, tc.err) || !errors.Is(found, failure.Config) {
					t.Errorf("error %v is not %v", found, tc.err)
				}
				if !strings.Contains(found.Error(), tc.errMsg) {
					t.Errorf("error %q does not mention %q", found, tc.errMsg)
				}
				return
			}
			s, ok := ts.Skill(tc.name)
			if !ok {
				t.Fatalf("skill %q not loaded; errors: %v", tc.name, ts.Errors())
			}
			for i, c := range tc.want {
				idx := slices.Index(codes(s.Warnings), c)
				if idx < 0 {
					t.Errorf("warning %s missing; got %v", c, s.Warnings)
					continue
				}
				w := s.Warnings[idx]
				if w.File != file {
					t.Errorf("warning names %q, want %q", w.File, file)
				}
				if i == 0 && w.Line != tc.line {
					t.Errorf("warning %s at line %d, want %d", c, w.Line, tc.line)
				}
			}
			if tc.check != nil {
				tc.check(t, s)
			}
		})
	}
}

// TestStrict refuses every deviation from the specification and reports
// them all.
func TestStrict(t *testing.T) {
	ts := loadCorpus(t, true)
	if _, ok := ts.Skill("clean"); !ok {
		t.Fatalf("clean skill refused in strict mode: %v", ts.Errors())
	}
	for _, folder := range []string{"long-description", "name-mismatch", "allowed-tools-list", "nested-metadata", "unquoted-colon", "booleans"} {
		found := false
		for _, e := range ts.Errors() {
			if strings.Contains(e.Error(), filepath.Join(folder, "SKILL.md")) {
				found = true
				if !errors.Is(e, errStrict) {
					t.Errorf("%s: %v is not errStrict", folder, e)
				}
			}
		}
		if !found {
			t.Errorf("%s loaded in strict mode", folder)
		}
	}
	// Quirks that are not spec deviations still load.
	for _, name := range []string{"bom", "crlf", "cr-only", "markup", "indented-delimiter"} {
		if _, ok := ts.Skill(name); !ok {
			t.Errorf("%s refused in strict mode", name)
		}
	}
	// Every deviation is reported, not only the first.
	data := []byte("---\nname: Bad--Name\ndescription: x\nextra-field: 1\nmetadata:\n  a:\n    b: c\n---\n")
	_, err := parse("SKILL.md", data, parseOptions{Folder: "other", Strict: true})
	for _, c := range []skillCode{warnNameInvalid, warnNameMismatch, warnUnknownField, warnMetadataNested} {
		if err == nil || !strings.Contains(err.Error(), string(c)) {
			t.Errorf("strict error %v does not report %s", err, c)
		}
	}
}

// TestLint reports the strict-only warnings without refusing anything.
func TestLint(t *testing.T) {
	data := []byte("---\nname: lint\ndescription: d\nuser-invocable: true\n---\n")
	for _, tc := range []struct {
		opts    parseOptions
		unknown bool
		refused bool
	}{
		{parseOptions{Folder: "lint"}, false, false},
		{parseOptions{Folder: "lint", Lint: true}, true, false},
		{parseOptions{Folder: "lint", Strict: true}, false, true},
		{parseOptions{Folder: "lint", Strict: true, Lint: true}, false, true},
	} {
		s, err := parse("lint/SKILL.md", data, tc.opts)
		if refused := err != nil; refused != tc.refused {
			t.Errorf("%+v: error %v", tc.opts, err)
			continue
		}
		if err != nil {
			continue
		}
		got := slices.Contains(codes(s.Warnings), warnUnknownField)
		if got != tc.unknown || (got && s.Warnings[0].Line != 4) {
			t.Errorf("%+v: warnings %v", tc.opts, s.Warnings)
		}
	}
}

func TestPrecedenceAndShadowing(t *testing.T) {
	ts, err := New(context.Background(), Config{Roots: []Root{
		{Path: filepath.Join("testdata", "roots", "high"), Label: "high"},
		{Path: filepath.Join("testdata", "roots", "low"), Label: "low"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	s, ok := ts.Skill("dup")
	if !ok || s.Description != "The high-precedence copy." || s.Root != "high" {
		t.Fatalf("dup = %+v", s)
	}
	sh := ts.Shadowed()
	if len(sh) != 1 || !strings.Contains(sh[0].File, filepath.Join("low", "dup")) || !strings.Contains(sh[0].By, filepath.Join("high", "dup")) {
		t.Errorf("shadowed = %+v", sh)
	}
	if !slices.Contains(codes(ts.Warnings()), warnShadowed) {
		t.Errorf("no shadowed warning in %v", ts.Warnings())
	}
	if _, ok := ts.Skill("nested"); !ok {
		t.Error("nested skill under a grouping folder not found")
	}
	var names []string
	for _, s := range ts.Skills() {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"dup", "nested", "only-low"}) {
		t.Errorf("catalog order %v", names)
	}
	// Depth bound: with MaxDepth 1 the nested skill is not searched.
	ts1, err := New(context.Background(), Config{MaxDepth: 1, Roots: []Root{{Path: filepath.Join("testdata", "roots", "high")}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ts1.Skill("nested"); ok {
		t.Error("MaxDepth 1 still found the nested skill")
	}
}

func TestLinks(t *testing.T) {
	ts := loadCorpus(t, false)
	_, b, err := ts.Body(context.Background(), "links")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]int{}
	for _, w := range b.Warnings {
		got[w.Code] = append(got[w.Code], w.Line)
	}
	// SKILL.md: frontmatter lines 1-4, "# Links" 5, blank 6, links 7, "## More" 9, line 11.
	want := map[string][]int{string(warnLinkCase): {7}, string(warnLinkMissing): {7}, string(warnLinkOutside): {11}}
	for c, lines := range want {
		if !slices.Equal(got[c], lines) {
			t.Errorf("%s at lines %v, want %v (all: %v)", c, got[c], lines, b.Warnings)
		}
	}
	if b.Line != 5 {
		t.Errorf("body starts at line %d, want 5", b.Line)
	}
	if len(b.Warnings) != 3 {
		t.Errorf("warnings %v", b.Warnings)
	}
	var outline []string
	for _, h := range b.Outline {
		outline = append(outline, strings.Repeat("#", h.Level)+" "+h.Text)
	}
	if !slices.Equal(outline, []string{"# Links", "## More"}) || b.Outline[1].Line != 9 {
		t.Errorf("outline %v %+v", outline, b.Outline)
	}
	ws, _ := ts.Check(context.Background())
	if !slices.Contains(codes(ws), warnLinkCase) {
		t.Errorf("Check misses the link warnings")
	}
}

func TestHugeFile(t *testing.T) {
	dir := t.TempDir()
	mk := func(name, content string) {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, "SKILL.md"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("huge", "---\nname: huge\ndescription: big\n---\n"+strings.Repeat("x", 2<<20))
	mk("huge-frontmatter", "---\nname: huge-frontmatter\ndescription: big\nnotes: |\n"+strings.Repeat("  more text\n", 10_000)+"---\n")
	ts, err := New(context.Background(), Config{Roots: []Root{{Path: dir}}})
	if err != nil {
		t.Fatal(err)
	}
	errs := ts.Errors()
	if len(errs) != 2 {
		t.Fatalf("errors %v", errs)
	}
	for _, e := range errs {
		if !errors.Is(e, errTooLarge) {
			t.Errorf("%v is not errTooLarge", e)
		}
	}
}
