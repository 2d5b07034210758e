package skills

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/adrg/frontmatter"
	"gopkg.in/yaml.v2"
)

func addCorpusSeeds(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "quirks", "*", "SKILL.md"))
	for _, p := range paths {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("---\nname: a\ndescription: b\n---\n"))
	f.Add([]byte("---\r\nname: a\r\ndescription: 'x: y'\r\n---"))
	f.Add([]byte("\n\n---yaml\ndescription: >\n  folded\n  ---\n---\n"))
	f.Add([]byte("---\ndescription: a: b: c\nmetadata: {a: {b: [1, 2]}}\nallowed-tools: [x, 1]\n---\n"))
}

// FuzzParse checks that the skill parser never panics and that what it
// accepts is usable: a name without control characters, a non-empty valid
// UTF-8 description, warnings naming the file, and a catalog entry that
// cannot break out of its markup.
func FuzzParse(f *testing.F) {
	addCorpusSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, strict := range []bool{false, true} {
			s, err := parse("f/SKILL.md", data, parseOptions{Folder: "f", Strict: strict})
			if err != nil {
				if !strings.Contains(err.Error(), "f/SKILL.md") {
					t.Fatalf("error does not name the file: %v", err)
				}
				continue
			}
			if s.Name == "" || s.Description == "" || !utf8.ValidString(s.Description) || strings.IndexFunc(s.Name, isUnsafeRune) >= 0 {
				t.Fatalf("unusable skill accepted: %+v", s)
			}
			for _, w := range s.Warnings {
				if w.File != "f/SKILL.md" || (strict && w.Spec) {
					t.Fatalf("bad warning %+v (strict %v)", w, strict)
				}
			}
			c := renderCatalog([]*Skill{s}, catalogOptions{Budget: 1 << 20})
			if strings.Count(c, "<") != 8 || strings.Count(c, ">") != 8 {
				t.Fatalf("markup escaped the catalog: %q", c)
			}
		}
	})
}

// FuzzFrontmatter compares the frontmatter reader with adrg/frontmatter
// (YAML-only formats) on the inputs where adrg's known traps do not apply:
// LF line endings, no BOM, a closing delimiter, and no line inside the
// block that trims to "---". There both must decode the same YAML.
func FuzzFrontmatter(f *testing.F) {
	addCorpusSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		h, need, _, err := scanHeader(data, true)
		if need {
			t.Fatal("need more data at EOF")
		}
		if err != nil {
			if !errors.Is(err, errNoFrontmatter) && !errors.Is(err, errNotYAML) && !errors.Is(err, errUnclosed) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if bytes.IndexByte(h.yaml, '\r') >= 0 || h.end > len(data) {
			t.Fatalf("bad header %+v", h)
		}
		// The incremental reader must agree with the whole-input one.
		for cut := 1; cut < len(data) && cut < 64; cut++ {
			h2, need, _, err2 := scanHeader(data[:cut], false)
			if !need && (err2 != nil || h2.end != h.end) {
				if err2 == nil || !errors.Is(err2, err) {
					t.Fatalf("prefix %d decided %v/%d, whole input %v/%d", cut, err2, h2.end, err, h.end)
				}
			}
		}
		if h.bom || h.crlf || h.cr || h.leadingBlank > 0 || !bytes.HasPrefix(data, []byte("---\n")) {
			return
		}
		for _, line := range strings.Split(string(h.yaml), "\n") {
			if strings.TrimSpace(line) == "---" {
				return // adrg's trap: an indented delimiter ends its frontmatter
			}
		}
		var ours yaml.MapSlice
		errOurs := h.format.Unmarshal(h.yaml, &ours)
		var theirs yaml.MapSlice
		_, errTheirs := frontmatter.Parse(bytes.NewReader(data), &theirs, yamlFormats...)
		if (errOurs == nil) != (errTheirs == nil) {
			t.Fatalf("decode disagrees: ours %v, adrg %v", errOurs, errTheirs)
		}
		if errOurs == nil && !reflect.DeepEqual(ours, theirs) {
			t.Fatalf("metadata disagrees:\nours %#v\nadrg %#v", ours, theirs)
		}
	})
}
