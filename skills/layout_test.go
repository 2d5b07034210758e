package skills

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var layouts = filepath.Join("testdata", "layouts")

func names(ts *Toolset) []string {
	var out []string
	for _, s := range ts.Skills() {
		out = append(out, s.Name)
	}
	slices.Sort(out)
	return out
}

func newToolset(t *testing.T, cfg Config) *Toolset {
	t.Helper()
	ts, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ts.Close() })
	return ts
}

// TestLayouts: the layouts of real repositories are found (issue 17.2,
// 17.5, 17.8, 17.9): plugins of a marketplace five levels down, named
// plugin:skill so that same-named skills of two plugins both load; the
// agents' dot folders and the .curated/.system groupings; a lower-case
// skill.md; a SKILL.md linked to a file elsewhere in the root. Other
// hidden folders and folders past the depth bound are not searched.
func TestLayouts(t *testing.T) {
	ts := newToolset(t, Config{Roots: []Root{{Path: layouts}}})
	want := []string{"common", "curated-one", "dot-agents", "dot-claude", "ext:ext-one", "ext:ext-two", "lower",
		"plugin-a:review", "plugin-b:common", "plugin-b:review", "system-one"}
	if got := names(ts); !slices.Equal(got, want) {
		t.Errorf("skills %q\nwant   %q", got, want)
	}
	if len(ts.Errors()) != 0 || len(ts.Shadowed()) != 0 {
		t.Errorf("errors %v, shadowed %v", ts.Errors(), ts.Shadowed())
	}
	s, _ := ts.Skill("lower")
	if s == nil || !slices.Contains(codes(s.Warnings), warnSkillFileName) || filepath.Base(s.File) != "skill.md" {
		t.Errorf("lower-case skill.md: %+v", s)
	}
	for _, name := range []string{"lower", "plugin-b:common", "plugin-a:review"} {
		a, err := ts.Activate(context.Background(), name)
		if err != nil || !strings.Contains(a.Body.Markdown, "Body.") {
			t.Errorf("activate %s: %v %v", name, a, err)
		}
	}
	// Deeper with a larger bound.
	deep := newToolset(t, Config{Roots: []Root{{Path: layouts}}, MaxDepth: 7})
	if _, ok := deep.Skill("too-deep"); !ok {
		t.Errorf("MaxDepth 7 did not find the skill 7 levels down: %q", names(deep))
	}
}

// TestRootInsideRoot (issue 17.1): a root inside an earlier root is not
// skipped, in either order, and each skill loads once.
func TestRootInsideRoot(t *testing.T) {
	inner := filepath.Join(layouts, "external_plugins", "ext", "skills")
	for _, roots := range [][]Root{{{Path: layouts}, {Path: inner}}, {{Path: inner}, {Path: layouts}}, {{Path: inner}}} {
		ts := newToolset(t, Config{Roots: roots, MaxDepth: 3})
		got := 0
		for _, s := range ts.Skills() {
			if strings.HasPrefix(s.Name, "ext:") {
				got++
			}
		}
		if got != 2 || len(ts.Shadowed()) != 0 {
			t.Errorf("roots %v: %d of the 2 skills of the inner root (all: %q), shadowed %v", roots, got, names(ts), ts.Shadowed())
		}
	}
}

// TestNothingFound (issue 17.2): a root holding no skill says what was not
// searched and why.
func TestNothingFound(t *testing.T) {
	ts := newToolset(t, Config{Roots: []Root{{Path: filepath.Join("testdata", "nothing")}}})
	var msg string
	for _, w := range ts.Warnings() {
		if w.Code == string(warnDiscovery) {
			msg = w.Message
		}
	}
	for _, part := range []string{"no SKILL.md found", "hidden folders (.cache)", "1 folder(s) at the depth limit of 6"} {
		if !strings.Contains(msg, part) {
			t.Errorf("discovery warning %q lacks %q", msg, part)
		}
	}
}

// TestLinkedSkillFile (issue 17.9): a SKILL.md linked to a file of another
// configured root loads; the same link with that root not configured is
// refused, and never read.
func TestLinkedSkillFile(t *testing.T) {
	pluginB := filepath.Join(layouts, "plugins", "tools", "plugin-b", "skills")
	ts := newToolset(t, Config{Roots: []Root{{Path: pluginB}, {Path: filepath.Join(layouts, "shared")}}})
	if _, ok := ts.Skill("plugin-b:common"); !ok {
		t.Errorf("the link into another root was refused: %q %v", names(ts), ts.Errors())
	}
	if _, _, err := ts.Body(context.Background(), "plugin-b:common"); err != nil {
		t.Errorf("body through the link: %v", err)
	}
	alone := newToolset(t, Config{Roots: []Root{{Path: pluginB}}})
	if _, ok := alone.Skill("plugin-b:common"); ok {
		t.Error("a link out of every root loaded")
	}
	refused := false
	for _, err := range alone.Errors() {
		refused = refused || errors.Is(err, errOutside)
	}
	if !refused {
		t.Errorf("no errOutside refusal: %v", alone.Errors())
	}
}

// FuzzPluginManifest: the plugin.json reader never panics, and the names
// it accepts are usable in a skill name.
func FuzzPluginManifest(f *testing.F) {
	for _, s := range []string{`{"name": "plugin-a"}`, `{"name": 1}`, `{"name": "a:b"}`, `{}`, `[`, `{"name": "` + strings.Repeat("x", 70) + `"}`, `{"name": "ok", "name": "dup"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		name, err := parsePluginManifest(data)
		if err != nil {
			if name != "" || !errors.Is(err, errManifest) {
				t.Fatalf("error %v with name %q", err, name)
			}
			return
		}
		if name == "" || len(name) > maxPluginName || strings.ContainsAny(name, ": /\\\x00\n") {
			t.Fatalf("unusable plugin name %q", name)
		}
	})
}

// TestNewKeepsCallerRoots: New makes root paths absolute in its own copy,
// never in the caller's slice (which it may share with other toolsets).
func TestNewKeepsCallerRoots(t *testing.T) {
	roots := []Root{{Path: filepath.Join("testdata", "quirks", "links"), Label: "rel"}}
	ts, err := New(context.Background(), Config{Roots: roots})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	if roots[0].Path != filepath.Join("testdata", "quirks", "links") {
		t.Errorf("New changed the caller's root to %q", roots[0].Path)
	}
	if !filepath.IsAbs(ts.cfg.Roots[0].Path) {
		t.Errorf("the toolset's root %q is not absolute", ts.cfg.Roots[0].Path)
	}
}
