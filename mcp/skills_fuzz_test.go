package mcp

import (
	"encoding/json"
	"io/fs"
	"path"
	"testing"

	"github.com/switchboard-dev/switchboard/mcp/internal/skillwire"
)

// FuzzSkillsFSAdd: whatever skill entries a server lists, the tree built
// from them holds only valid paths, each under a folder, and no file
// outside the skill that listed it.
func FuzzSkillsFSAdd(f *testing.F) {
	f.Add([]byte(`[{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a"},"resources":[{"uri":"skill://a/SKILL.md","digest":"sha256:0000000000000000000000000000000000000000000000000000000000000000","size":3},{"uri":"skill://a/x/y.md","digest":"sha256:0000000000000000000000000000000000000000000000000000000000000000","size":1}]}]`))
	f.Add([]byte(`[{"uri":"skill://acme/billing/refunds/SKILL.md","frontmatter":{"name":"refunds"},"resources":[{"uri":"skill://acme/billing/refunds/SKILL.md","digest":"sha256:0000000000000000000000000000000000000000000000000000000000000000","size":3}]},{"uri":"skill://acme/SKILL.md","frontmatter":{"name":"acme"},"resources":[{"uri":"skill://acme/SKILL.md","digest":"x","size":1}]}]`))
	f.Add([]byte(`[{"uri":"skill://a/../b/SKILL.md","frontmatter":{"name":"b"},"resources":[{"uri":"skill://a/../b/SKILL.md","size":1}]}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var entries []skillwire.Skill
		if json.Unmarshal(data, &entries) != nil {
			return
		}
		for _, verified := range []bool{true, false} {
			sf := &SkillsFS{server: "s", nodes: map[string]*skillNode{".": {dir: true}}}
			for _, e := range entries {
				_ = sf.add(e, verified)
			}
			for p, n := range sf.nodes {
				if !fs.ValidPath(p) {
					t.Fatalf("invalid path %q in the tree", p)
				}
				if p == "." {
					continue
				}
				parent := sf.nodes[path.Dir(p)]
				if parent == nil || !parent.dir {
					t.Fatalf("%q has no parent folder", p)
				}
				if !n.dir && n.uri == "" {
					t.Fatalf("file %q has no URI", p)
				}
			}
		}
	})
}
