package server_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/mcp"
	"github.com/switchboard-dev/switchboard/mcp/server"
	"github.com/switchboard-dev/switchboard/skills"
)

// skillTree writes n filler skills and one skill with nested metadata and
// bundled files (text and binary) under a temporary root.
func skillTree(t *testing.T, n int) string {
	t.Helper()
	root := t.TempDir()
	write := func(rel, data string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("pdf-tools/SKILL.md", "---\nname: pdf-tools\ndescription: Fill and extract PDF forms.\nlicense: Apache-2.0\nmetadata:\n  version: \"2.1\"\n  owner:\n    team: docs\n---\n# PDF tools\n\nSee [the forms guide](references/FORMS.md).\n")
	write("pdf-tools/references/FORMS.md", "# Forms\n\nFill every field.\n")
	write("pdf-tools/scripts/extract.py", "print('extract')\n")
	write("pdf-tools/assets/logo.png", "\x89PNG\r\n\x1a\n\x00\x01binary")
	for i := range n {
		write(fmt.Sprintf("filler-%02d/SKILL.md", i), fmt.Sprintf("---\nname: filler-%02d\ndescription: Filler skill %d.\n---\nDo thing %d.\n", i, i, i))
	}
	return root
}

func managerOf(t *testing.T, s *gomcp.Server) *mcp.Manager {
	t.Helper()
	ctx := testkit.Ctx(t, 30*time.Second)
	m, err := mcp.New(ctx, mcp.Config{Servers: []mcp.ServerConfig{{Name: "docs", Server: s}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// TestSkillsExtension: skills served by mcp/server under the skills
// extension (skills/list with pages, skills/get, skill://<name>/SKILL.md
// resources) load through Manager.SkillsFS into a skills toolset as they
// load from the folder: the same catalog, bodies and bundled files.
func TestSkillsExtension(t *testing.T) {
	ctx := testkit.Ctx(t, 60*time.Second)
	root := skillTree(t, 24) // 25 skills: two skills/list pages
	local, err := skills.New(ctx, skills.Config{Roots: []skills.Root{{Path: root}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { local.Close() })
	srv := newServer(t, server.Config{Skills: local})

	cs := connectMem(t, srv, nil)
	if _, ok := cs.InitializeResult().Capabilities.Extensions[mcp.SkillsExtension]; !ok {
		t.Fatalf("capabilities %+v do not declare %s", cs.InitializeResult().Capabilities, mcp.SkillsExtension)
	}
	if cs.InitializeResult().Capabilities.Logging == nil {
		t.Error("declaring the extension dropped the logging capability")
	}
	r, err := cs.ReadResource(ctx, &gomcp.ReadResourceParams{URI: "skill://pdf-tools/SKILL.md"})
	if err != nil || len(r.Contents) != 1 || r.Contents[0].MIMEType != "text/markdown" {
		t.Fatalf("read SKILL.md: %v %+v", err, r)
	}

	m := managerOf(t, srv.MCP())
	fsys, err := m.SkillsFS(ctx, "docs")
	if err != nil {
		t.Fatal(err)
	}
	if ref := fsys.Refused(); len(ref) > 0 {
		t.Fatalf("refused: %v", ref)
	}
	remote, err := skills.New(ctx, skills.Config{Roots: []skills.Root{{FS: fsys, Label: "mcp:docs"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { remote.Close() })
	names := func(ts *skills.Toolset) (out []string) {
		for _, s := range ts.Skills() {
			out = append(out, s.Name)
		}
		slices.Sort(out)
		return out
	}
	if got, want := names(remote), names(local); !slices.Equal(got, want) || len(got) != 25 {
		t.Fatalf("skills over MCP %v, from the folder %v", got, want)
	}
	rs, rb, err := remote.Body(ctx, "pdf-tools")
	if err != nil {
		t.Fatal(err)
	}
	ls, lb, _ := local.Body(ctx, "pdf-tools")
	if rb.Markdown != lb.Markdown || rs.License != ls.License || rs.Metadata["owner.team"] != "docs" {
		t.Errorf("body or metadata differ: %q %+v, want %q %+v", rb.Markdown, rs.Metadata, lb.Markdown, ls.Metadata)
	}
	for _, f := range []string{"references/FORMS.md", "assets/logo.png", "scripts/extract.py"} {
		got, _, err := remote.ReadFile(ctx, "pdf-tools", f, 0)
		want, _, _ := local.ReadFile(ctx, "pdf-tools", f, 0)
		if err != nil || string(got) != string(want) {
			t.Errorf("%s: %q %v, want %q", f, got, err, want)
		}
	}
	if _, _, err := remote.ReadFile(ctx, "pdf-tools", "../filler-01/SKILL.md", 0); err == nil {
		t.Error("a path out of the skill was read")
	}
}

// TestSkillsGet: skills/get answers a served skill's entry with its
// verbatim frontmatter and file digests, and an unknown URI with
// invalid params (-32602).
func TestSkillsGet(t *testing.T) {
	ctx := testkit.Ctx(t, 30*time.Second)
	local, err := skills.New(ctx, skills.Config{Roots: []skills.Root{{Path: skillTree(t, 0)}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { local.Close() })
	srv := newServer(t, server.Config{Skills: local})
	m := managerOf(t, srv.MCP())
	entry, err := m.Skill(ctx, "docs", "skill://pdf-tools/SKILL.md")
	if err != nil {
		t.Fatal(err)
	}
	owner, _ := entry.Frontmatter["metadata"].(map[string]any)["owner"].(map[string]any)
	if entry.Frontmatter["name"] != "pdf-tools" || entry.Frontmatter["license"] != "Apache-2.0" || owner["team"] != "docs" {
		t.Errorf("frontmatter %+v is not the file's", entry.Frontmatter)
	}
	if len(entry.Files) != 4 {
		t.Errorf("files %+v, want SKILL.md and 3 bundled", entry.Files)
	}
	for _, f := range entry.Files {
		if len(f.Digest) != len("sha256:")+64 || f.Size <= 0 {
			t.Errorf("file %+v has no digest or size", f)
		}
	}
	_, err = m.Skill(ctx, "docs", "skill://nope/SKILL.md")
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("unknown skill: %v, want invalid params", err)
	}
}

// TestSkillsFSChecks: a server whose entry does not match its files
// (a digest or size that is not the content's), or breaks the
// extension's rules, is refused; a server without the extension still
// gives its skill:// resources, unverified.
func TestSkillsFSChecks(t *testing.T) {
	const body = "---\nname: alpha\ndescription: A.\n---\nAlpha.\n"
	entry := func(uri, digest string, size int64) map[string]any {
		return map[string]any{"uri": uri, "digest": digest, "size": size}
	}
	good := digestOf(body)
	tests := []struct {
		name      string
		ext       bool
		skills    []map[string]any
		refused   int
		openErr   bool
		wantFiles int
	}{
		{name: "verified", ext: true, skills: []map[string]any{{"uri": "skill://alpha/SKILL.md",
			"frontmatter": map[string]any{"name": "alpha", "description": "A."}, "resources": []any{entry("skill://alpha/SKILL.md", good, int64(len(body)))}}}},
		{name: "wrong digest", ext: true, openErr: true, skills: []map[string]any{{"uri": "skill://alpha/SKILL.md",
			"frontmatter": map[string]any{"name": "alpha", "description": "A."}, "resources": []any{entry("skill://alpha/SKILL.md", digestOf("other"), int64(len(body)))}}}},
		{name: "wrong size", ext: true, openErr: true, skills: []map[string]any{{"uri": "skill://alpha/SKILL.md",
			"frontmatter": map[string]any{"name": "alpha", "description": "A."}, "resources": []any{entry("skill://alpha/SKILL.md", good, 3)}}}},
		{name: "name not the path", ext: true, refused: 1, skills: []map[string]any{{"uri": "skill://alpha/SKILL.md",
			"frontmatter": map[string]any{"name": "beta", "description": "A."}, "resources": []any{entry("skill://alpha/SKILL.md", good, int64(len(body)))}}}},
		{name: "file outside", ext: true, refused: 1, skills: []map[string]any{{"uri": "skill://alpha/SKILL.md",
			"frontmatter": map[string]any{"name": "alpha", "description": "A."}, "resources": []any{entry("skill://alpha/SKILL.md", good, int64(len(body))), entry("skill://other/x.md", good, 1)}}}},
		{name: "dynamic", ext: true, refused: 1, skills: []map[string]any{{"uri": "skill://alpha/SKILL.md",
			"frontmatter": map[string]any{"name": "alpha", "description": "A."}, "resources": "dynamic"}}},
		{name: "too big", ext: true, refused: 1, skills: []map[string]any{{"uri": "skill://alpha/SKILL.md",
			"frontmatter": map[string]any{"name": "alpha", "description": "A."}, "resources": []any{entry("skill://alpha/SKILL.md", good, 17<<20)}}}},
		{name: "no extension", ext: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testkit.Ctx(t, 30*time.Second)
			opts := &gomcp.ServerOptions{}
			if tt.ext {
				opts.Capabilities = &gomcp.ServerCapabilities{}
				opts.Capabilities.AddExtension(mcp.SkillsExtension, nil)
			}
			s := gomcp.NewServer(&gomcp.Implementation{Name: "skills", Version: "1"}, opts)
			s.AddResource(&gomcp.Resource{URI: "skill://alpha/SKILL.md", Name: "alpha", MIMEType: "text/markdown"},
				func(context.Context, *gomcp.ReadResourceRequest) (*gomcp.ReadResourceResult, error) {
					return &gomcp.ReadResourceResult{Contents: []*gomcp.ResourceContents{{URI: "skill://alpha/SKILL.md", MIMEType: "text/markdown", Text: body}}}, nil
				})
			if tt.ext {
				if err := gomcp.AddReceivingCustomMethod(s, "skills/list", func(context.Context, *gomcp.ServerSession, *listParams) (*listResult, error) {
					return &listResult{ResultType: "complete", Skills: tt.skills, TTLMs: 1, CacheScope: "private"}, nil
				}); err != nil {
					t.Fatal(err)
				}
			}
			m := managerOf(t, s)
			fsys, err := m.SkillsFS(ctx, "docs")
			if err != nil {
				t.Fatal(err)
			}
			if got := len(fsys.Refused()); got != tt.refused {
				t.Fatalf("refused %v, want %d", fsys.Refused(), tt.refused)
			}
			if tt.refused > 0 {
				if _, err := fs.Stat(fsys, "alpha/SKILL.md"); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("a refused skill is in the tree: %v", err)
				}
				return
			}
			data, err := fs.ReadFile(fsys, "alpha/SKILL.md")
			if tt.openErr {
				var fe *failure.Error
				if !errors.As(err, &fe) || fe.Kind != failure.Protocol {
					t.Fatalf("read %q %v, want a protocol failure", data, err)
				}
				return
			}
			if err != nil || string(data) != body {
				t.Fatalf("read %q %v", data, err)
			}
		})
	}
}

type listParams struct {
	gomcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type listResult struct {
	gomcp.ResultBase
	ResultType string           `json:"resultType"`
	Skills     []map[string]any `json:"skills"`
	TTLMs      int64            `json:"ttlMs"`
	CacheScope string           `json:"cacheScope"`
}

func digestOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}
