package skills

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// TestRefusalOf: every refusal of the corpus carries its file, line and
// reason, and its text is unchanged by the carrier.
func TestRefusalOf(t *testing.T) {
	ts := loadCorpus(t, false)
	tests := []struct {
		folder string
		line   int
		reason error
	}{
		{"toml", 1, ErrNotYAML},
		{"json", 1, ErrNotYAML},
		{"no-frontmatter", 0, ErrNoFrontmatter},
		{"no-description", 2, ErrNoDescription},
		{"unclosed", 0, ErrUnclosed},
		{"bad-yaml", 3, ErrBadYAML},
		{"nul", 3, ErrBinary},
		{"non-utf8", 3, ErrNotUTF8},
	}
	byFile := map[string]Refusal{}
	for _, err := range ts.Errors() {
		r, ok := RefusalOf(err)
		if !ok {
			t.Fatalf("no refusal in %v", err)
		}
		if !errors.Is(err, r.Reason) {
			t.Errorf("%v is not its reason %v", err, r.Reason)
		}
		byFile[r.File] = r
	}
	for _, tc := range tests {
		t.Run(tc.folder, func(t *testing.T) {
			file := filepath.Join(ts.cfg.Roots[0].Path, tc.folder, "SKILL.md")
			r, ok := byFile[file]
			if !ok {
				t.Fatalf("no refusal for %s in %v", file, byFile)
			}
			if r.Line != tc.line || r.Reason != tc.reason {
				t.Errorf("refusal %+v, want line %d reason %v", r, tc.line, tc.reason)
			}
		})
	}
	if _, ok := RefusalOf(errors.New("other")); ok {
		t.Error("RefusalOf accepted a foreign error")
	}
	// Body refusals carry one too.
	root := t.TempDir()
	writeSkill(t, root, "nul-body", "name: nul-body\ndescription: d\n", "line\ntext\x00\n")
	ts2, err := New(context.Background(), Config{Roots: []Root{{Path: root}}})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = ts2.Body(context.Background(), "nul-body")
	if r, ok := RefusalOf(err); !ok || r.Reason != ErrBinary || r.Line != 6 {
		t.Errorf("body refusal %+v %v", r, ok)
	}
}
