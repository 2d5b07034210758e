package skills

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
)

func writeSkill(t testing.TB, root, folder, frontmatter, body string) string {
	t.Helper()
	dir := filepath.Join(root, folder)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\n"+frontmatter+"---\n"+body), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func callTool(t *testing.T, ts *Toolset, name string, args any) (*agent.Result, error) {
	t.Helper()
	tools, _ := ts.Tools(context.Background())
	for _, tool := range tools {
		if tool.Spec().Name == name {
			raw, _ := json.Marshal(args)
			return tool.Call(context.Background(), raw)
		}
	}
	t.Fatalf("no tool %s", name)
	return nil, nil
}

// TestReadFileConfinement covers path traversal, absolute paths and
// symbolic links that escape the skill folder (created here, not
// committed), and links that stay inside it.
func TestReadFileConfinement(t *testing.T) {
	root := t.TempDir()
	dir := writeSkill(t, root, "conf", "name: conf\ndescription: confinement\n", "Body.\n")
	secret := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(secret, []byte("TOP SECRET"), 0o600)
	os.MkdirAll(filepath.Join(dir, "refs"), 0o755)
	os.WriteFile(filepath.Join(dir, "refs", "a.md"), []byte("alpha"), 0o644)
	if err := os.Symlink(secret, filepath.Join(dir, "escape.txt")); err != nil {
		t.Skip("symlinks unavailable:", err)
	}
	os.Symlink(filepath.Dir(secret), filepath.Join(dir, "escape-dir"))
	os.Symlink(filepath.Join("refs", "a.md"), filepath.Join(dir, "inside.md"))
	os.Symlink("../../"+filepath.Base(filepath.Dir(secret))+"/secret.txt", filepath.Join(dir, "refs", "rel-escape.txt"))

	ts, err := New(context.Background(), Config{Roots: []Root{{Path: root}}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path    string
		want    string
		outside bool
		kind    failure.Kind
	}{
		{path: "refs/a.md", want: "alpha"},
		{path: "./refs/../refs/a.md", kind: failure.InvalidArgs, outside: true},
		{path: "inside.md", want: "alpha"},
		{path: "../conf/SKILL.md", kind: failure.InvalidArgs, outside: true},
		{path: "refs/../../x", kind: failure.InvalidArgs, outside: true},
		{path: secret, kind: failure.InvalidArgs, outside: true},
		{path: "/etc/passwd", kind: failure.InvalidArgs, outside: true},
		{path: "..\\..\\secret.txt", kind: failure.InvalidArgs, outside: true},
		{path: "escape.txt", kind: failure.InvalidArgs, outside: true},
		{path: "escape-dir/secret.txt", kind: failure.InvalidArgs, outside: true},
		{path: "refs/rel-escape.txt", kind: failure.InvalidArgs, outside: true},
		{path: "missing.md", kind: failure.InvalidArgs},
		{path: "refs", kind: failure.InvalidArgs},
		{path: "", kind: failure.InvalidArgs},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			res, err := callTool(t, ts, ToolReadFile, map[string]any{"skill": "conf", "path": tc.path})
			if tc.want != "" {
				if err != nil || res.Text() != tc.want {
					t.Fatalf("got %v, %v", res.Text(), err)
				}
				return
			}
			if err == nil {
				t.Fatalf("read %q: %q", tc.path, res.Text())
			}
			if strings.Contains(err.Error(), "TOP SECRET") {
				t.Fatal("secret leaked in the error")
			}
			if !errors.Is(err, tc.kind) {
				t.Errorf("error %v is not %v", err, tc.kind)
			}
			if tc.outside != errors.Is(err, errOutside) {
				t.Errorf("error %v: errOutside = %v, want %v", err, !tc.outside, tc.outside)
			}
		})
	}
	// Activation does not list the escaping links.
	a, err := ts.Activate(context.Background(), "conf")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range a.Files {
		files = append(files, f.Path)
	}
	if strings.Join(files, ",") != "inside.md,refs/a.md" {
		t.Errorf("files %v", files)
	}
}

func TestReadFilePagesAndBinary(t *testing.T) {
	root := t.TempDir()
	dir := writeSkill(t, root, "pages", "name: pages\ndescription: paging\n", "Body.\n")
	text := strings.Repeat("é", 100) // 200 bytes, two per rune
	os.WriteFile(filepath.Join(dir, "long.txt"), []byte(text), 0o644)
	bin := []byte{0x89, 'P', 'N', 'G', 0, 1, 2, 0xff}
	os.WriteFile(filepath.Join(dir, "img.png"), bin, 0o644)
	ts, err := New(context.Background(), Config{Roots: []Root{{Path: root}}, MaxReadBytes: 51})
	if err != nil {
		t.Fatal(err)
	}
	res, err := callTool(t, ts, ToolReadFile, map[string]any{"skill": "pages", "path": "long.txt"})
	if err != nil {
		t.Fatal(err)
	}
	// 51 bytes would split a rune: the page ends at 50.
	if !strings.HasPrefix(res.Text(), strings.Repeat("é", 25)+"\n[truncated: bytes 0-50 of 200") || !strings.Contains(res.Text(), "offset 50") {
		t.Errorf("page 1: %q", res.Text())
	}
	res, err = callTool(t, ts, ToolReadFile, map[string]any{"skill": "pages", "path": "long.txt", "offset": 150})
	if err != nil || res.Text() != strings.Repeat("é", 25) {
		t.Errorf("last page: %q %v", res.Text(), err)
	}
	res, err = callTool(t, ts, ToolReadFile, map[string]any{"skill": "pages", "path": "img.png"})
	if err != nil {
		t.Fatal(err)
	}
	want := "[binary file img.png (image/png), bytes 0-8 of 8, base64]\n" + base64.StdEncoding.EncodeToString(bin)
	if res.Text() != want {
		t.Errorf("binary: %q, want %q", res.Text(), want)
	}
	if _, err := callTool(t, ts, ToolReadFile, map[string]any{"skill": "nope", "path": "x"}); !errors.Is(err, failure.InvalidArgs) {
		t.Errorf("unknown skill: %v", err)
	}
}

func TestEmbeddedRoot(t *testing.T) {
	fsys := fstest.MapFS{
		"skills/hello/SKILL.md":         {Data: []byte("---\nname: hello\ndescription: Say hello.\n---\n# Hello\nSee [notes](notes.md).\n")},
		"skills/hello/notes.md":         {Data: []byte("notes")},
		"skills/hello/scripts/run.sh":   {Data: []byte("#!/bin/sh\necho hi\n"), Mode: 0o755},
		"skills/grp/deep/SKILL.md":      {Data: []byte("---\nname: deep\ndescription: Deep.\n---\n")},
		"skills/broken/SKILL.md":        {Data: []byte("no frontmatter")},
		"skills/not-a-skill/readme.txt": {Data: []byte("x")},
	}
	ts, err := New(context.Background(), Config{Roots: []Root{{FS: fsys, Dir: "skills", Label: "builtin"}}, Scripts: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts.Skills()) != 2 || len(ts.Errors()) != 1 || !strings.Contains(ts.Errors()[0].Error(), "builtin:skills/broken/SKILL.md") {
		t.Fatalf("skills %v errors %v", ts.Skills(), ts.Errors())
	}
	res, err := callTool(t, ts, ToolActivate, map[string]any{"name": "hello"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Base directory: builtin:skills/hello", "- notes.md (5 bytes)", "- scripts/run.sh", "# Hello"} {
		if !strings.Contains(res.Text(), want) {
			t.Errorf("activation lacks %q: %s", want, res.Text())
		}
	}
	res, err = callTool(t, ts, ToolReadFile, map[string]any{"skill": "hello", "path": "notes.md"})
	if err != nil || res.Text() != "notes" {
		t.Errorf("read: %v %v", res, err)
	}
	if _, err := callTool(t, ts, ToolReadFile, map[string]any{"skill": "hello", "path": "../deep/SKILL.md"}); !errors.Is(err, errOutside) {
		t.Errorf("traversal in an fs.FS: %v", err)
	}
	if _, err := ts.runScript(context.Background(), "hello", "scripts/run.sh", nil); !errors.Is(err, failure.ToolError) {
		t.Errorf("embedded script: %v", err)
	}
}

func TestBodyCacheInvalidation(t *testing.T) {
	root := t.TempDir()
	dir := writeSkill(t, root, "c", "name: c\ndescription: cache\n", "one\n")
	ts, err := New(context.Background(), Config{Roots: []Root{{Path: root}}})
	if err != nil {
		t.Fatal(err)
	}
	_, b1, err := ts.Body(context.Background(), "c")
	if err != nil || b1.Markdown != "one\n" {
		t.Fatal(b1, err)
	}
	_, b2, _ := ts.Body(context.Background(), "c")
	if b1 != b2 {
		t.Error("body not cached")
	}
	os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: c\ndescription: cache\n---\ntwo, longer\n"), 0o644)
	_, b3, _ := ts.Body(context.Background(), "c")
	if b3 == nil || b3.Markdown != "two, longer\n" {
		t.Errorf("stale body %+v", b3)
	}
	changed, err := ts.Reload(context.Background())
	if err != nil || !changed {
		t.Errorf("reload after an edit: changed=%v err=%v", changed, err)
	}
	changed, _ = ts.Reload(context.Background())
	if changed {
		t.Error("reload without an edit reported a change")
	}
}
