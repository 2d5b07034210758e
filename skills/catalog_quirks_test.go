package skills

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode"
)

// TestPlaceholders (issue 17.4): {baseDir}/x and ${CLAUDE_SKILL_DIR}/x are
// served as paths the read tool takes, and their links are checked as
// bundled files.
func TestPlaceholders(t *testing.T) {
	ts := loadCorpus(t, false)
	_, b, err := ts.Body(context.Background(), "placeholders")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.Markdown, "{baseDir}") || strings.Contains(b.Markdown, "CLAUDE_SKILL_DIR") ||
		!strings.Contains(b.Markdown, "(references/guide.md)") || !strings.Contains(b.Markdown, "`scripts/run.sh` from .") {
		t.Errorf("placeholders not expanded: %q", b.Markdown)
	}
	if len(b.Warnings) != 0 {
		t.Errorf("warnings for links to bundled files: %v", b.Warnings)
	}
	if len(b.Links) != 1 || b.Links[0].Path != "references/guide.md" {
		t.Errorf("links %+v", b.Links)
	}
	if _, _, err := ts.ReadFile(context.Background(), "placeholders", "references/guide.md", 0); err != nil {
		t.Errorf("the expanded path cannot be read: %v", err)
	}
}

// TestReasonOnce (issue 17.7): a refusal's error states its reason once.
func TestReasonOnce(t *testing.T) {
	ts := loadCorpus(t, false)
	if len(ts.Errors()) == 0 {
		t.Fatal("no refusals in the corpus")
	}
	for _, err := range ts.Errors() {
		r, ok := RefusalOf(err)
		if !ok {
			t.Fatalf("no refusal in %v", err)
		}
		if n := strings.Count(err.Error(), r.Reason.Error()); n != 1 {
			t.Errorf("the reason is stated %d times: %q", n, err)
		}
		if !errors.Is(err, r.Reason) {
			t.Errorf("%v is not its reason", err)
		}
	}
}

// TestCatalogFair (issue 17.6): when descriptions must be shortened, each
// keeps as much as fits, cut at a word boundary, and they are dropped
// only when what would be left is too short to choose by.
func TestCatalogFair(t *testing.T) {
	var many []*Skill
	desc := "Review pull requests thoroughly, checking correctness, naming, tests and documentation before approving anything"
	for i := range 60 {
		many = append(many, &Skill{Name: fmt.Sprintf("skill-%02d", i), Description: desc})
	}
	// Names alone take about 2,550 characters; 6,000 leaves about 30 a
	// description: fewer than the old 40-character floor.
	c := renderCatalog(many, catalogOptions{Budget: 6_000})
	if len(c) > 6_000 {
		t.Fatalf("over budget: %d", len(c))
	}
	if n := strings.Count(c, "<description>"); n != 60 {
		t.Fatalf("%d descriptions kept, want 60: %q", n, c)
	}
	if !strings.Contains(c, "matches a skill's description") {
		t.Error("header does not say to match by description")
	}
	for _, part := range strings.Split(c, "<description>")[1:] {
		d, _, _ := strings.Cut(part, "</description>")
		kept, ok := strings.CutSuffix(d, "…")
		if !ok {
			t.Fatalf("not shortened: %q", d)
		}
		if !strings.HasPrefix(desc, kept) || len(kept) >= len(desc) {
			t.Fatalf("not a shortened start of the description: %q", d)
		}
		// The next character of the original must not continue a word.
		if next := rune(desc[len(kept)]); unicode.IsLetter(next) || unicode.IsDigit(next) {
			t.Errorf("cut mid-word: %q", d)
		}
	}
	names := renderCatalog(many, catalogOptions{Budget: 3_000})
	if strings.Contains(names, "<description>") || !strings.Contains(names, "matches a skill's name") {
		t.Errorf("names-only catalog: %q", names[:300])
	}
}
