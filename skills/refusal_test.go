package skills

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
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
		code   string
	}{
		{"toml", 1, errNotYAML, "not-yaml"},
		{"json", 1, errNotYAML, "not-yaml"},
		{"no-frontmatter", 0, errNoFrontmatter, "no-frontmatter"},
		{"no-description", 2, errNoDescription, "no-description"},
		{"unclosed", 0, errUnclosed, "unclosed"},
		{"bad-yaml", 3, errBadYAML, "bad-yaml"},
		{"nul", 3, errBinary, "binary"},
		{"non-utf8", 3, errNotUTF8, "not-utf8"},
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
			if r.Line != tc.line || r.Reason != tc.reason || r.Code != tc.code {
				t.Errorf("refusal %+v, want line %d reason %v code %q", r, tc.line, tc.reason, tc.code)
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
	if r, ok := RefusalOf(err); !ok || r.Reason != errBinary || r.Code != "binary" || r.Line != 6 {
		t.Errorf("body refusal %+v %v", r, ok)
	}
}

// TestRefusalCode: every refusal reason has its stable code (the strings
// of docs/skills.md and of skillcheck -json), and any other error, even one
// wrapping a reason, is "unreadable".
func TestRefusalCode(t *testing.T) {
	tests := []struct {
		reason error
		code   string
	}{
		{errNoFrontmatter, "no-frontmatter"},
		{errNotYAML, "not-yaml"},
		{errUnclosed, "unclosed"},
		{errBadYAML, "bad-yaml"},
		{errNoDescription, "no-description"},
		{errNoName, "no-name"},
		{errBinary, "binary"},
		{errNotUTF8, "not-utf8"},
		{errTooLarge, "too-large"},
		{errStrict, "strict"},
		{errOutside, "symlink-outside"},
		{fs.ErrPermission, "unreadable"},
		{fmt.Errorf("%w: %w", errOutside, errSwapped), "unreadable"},
	}
	for _, tc := range tests {
		r, ok := RefusalOf(loadError("x/SKILL.md", 0, tc.reason, ""))
		if !ok || r.Code != tc.code {
			t.Errorf("RefusalOf(%v).Code = %q (%v), want %q", tc.reason, r.Code, ok, tc.code)
		}
	}
}
