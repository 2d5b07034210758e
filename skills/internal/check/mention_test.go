package check

import (
	"io/fs"
	"strings"
	"testing"
)

func TestMentioned(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		links []string
		path  string
		want  bool
	}{
		{"path in code", "Run `scripts/fill.py` first.", nil, "scripts/fill.py", true},
		{"end of sentence", "See references/forms.md.", nil, "references/forms.md", true},
		{"end of text", "See FORMS.md", nil, "FORMS.md", true},
		{"dot slash", "Run ./scripts/fill.py now", nil, "scripts/fill.py", true},
		{"base dir prefix", "Run {baseDir}/scripts/fill.py", nil, "scripts/fill.py", true},
		{"in parentheses", "(see assets/logo.png)", nil, "assets/logo.png", true},
		{"folder with slash", "Templates are in `assets/`.", nil, "assets/a/b.txt", true},
		{"inner folder with slash", "Use assets/a/ for these.", nil, "assets/a/b.txt", true},
		{"linked", "", []string{"references/guide.md"}, "references/guide.md", true},
		{"linked folder", "", []string{"references"}, "references/guide.md", true},
		{"linked in another case", "", []string{"references/Guide.md"}, "references/guide.md", true},
		{"longer name", "See data.md", nil, "a.md", false},
		{"longer extension", "See guide.md.bak", nil, "guide.md", false},
		{"longer path", "Run scripts/fill.py.orig", nil, "scripts/fill.py", false},
		{"sibling in folder", "Run scripts/a.sh", nil, "scripts/b.sh", false},
		{"folder without slash", "Use the scripts folder", nil, "scripts/a.sh", false},
		{"folder prefix of a path", "Run scripts/a.sh", nil, "scripts/a", false},
		{"word suffix", "guide.mdx", nil, "guide.md", false},
		{"other link", "", []string{"references/guide"}, "references/guide.md", false},
		{"not mentioned", "Nothing here.", nil, "notes.txt", false},
		{"second occurrence", "xnotes.txt and notes.txt", nil, "notes.txt", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := mentioned(tc.text, tc.links, tc.path); got != tc.want {
				t.Errorf("mentioned(%q, %q, %q) = %v, want %v", tc.text, tc.links, tc.path, got, tc.want)
			}
		})
	}
}

// FuzzMentioned checks the mention finder on any text: it never panics, it
// finds only what the text holds, and it always finds a path written
// between blanks.
func FuzzMentioned(f *testing.F) {
	f.Add("Run `scripts/fill.py`.", "scripts/fill.py")
	f.Add("see assets/", "assets/x/y.png")
	f.Add("a.md.", "a.md")
	f.Add("\xff/x", "x")
	f.Fuzz(func(t *testing.T, text, p string) {
		got := mentioned(text, nil, p)
		if got {
			found := strings.Contains(text, p)
			for d := p; !found && strings.Contains(d, "/"); {
				d = d[:strings.LastIndex(d, "/")]
				found = strings.Contains(text, d+"/")
			}
			if !found {
				t.Fatalf("mentioned(%q, %q) without the path or a folder in the text", text, p)
			}
		}
		if fs.ValidPath(p) && p != "." {
			if !mentioned(text+" "+p+" ", nil, p) {
				t.Fatalf("a path between blanks is not found: %q in %q", p, text)
			}
		}
	})
}
