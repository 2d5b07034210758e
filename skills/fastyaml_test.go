package skills

import (
	"reflect"
	"testing"

	"gopkg.in/yaml.v2"
)

// fastYAMLSeeds are frontmatter blocks in and out of the fast path's subset.
var fastYAMLSeeds = []string{
	"name: pdf\ndescription: Fill PDF forms. Use when the user shares a PDF.\n",
	"name: 'it''s'\ndescription: \"say \\\"hi\\\"\\n\"\nlicense: Apache-2.0\n",
	"metadata:\n  author: someone\n  version: \"1.0\"\nallowed-tools: mcp__a__b mcp__c__d\n",
	"# comment\nname: x\n\ndescription: why\n",
	"description: yes\n", "description: 1.0\n", "description: 2026-01-01\n", "description: ~\n",
	"description: >\n  folded\n", "description: a # comment\n", "metadata:\n  a:\n    b: c\n",
	"name: x\nname: y\n", "description: Use when\n  the user says: hello\n", "key:\n", "a: [1, 2]\n",
	"description: \"\\uD83D\\uDD2D\"\n",
	"description: >\n  folded over\n  two lines.\n\n  A paragraph.\nname: x\n", "description: |\n  literal\n    indented\n\n  end\n",
	"description: >-\n  stripped\n", "allowed-tools:\n  - Read\n  - 'Bash(git:*)'\nname: x\n", "a:\n  - x\n  b: c\n", "a:\n  b: c\n  - x\n", "description: |+\n  kept\n\n", "description: >\n\n  leading blank\n", "description: >\n  a\n   b\n", "Yes: x\n", "description: café\n", "description: \"tab\there\"\n",
}

// TestFastYAML: the fast path decodes its subset exactly as yaml.v2 does,
// and declines the rest.
func TestFastYAML(t *testing.T) {
	accepted := 0
	for _, src := range fastYAMLSeeds {
		got, ok := fastYAML([]byte(src))
		var want yaml.MapSlice
		err := yaml.Unmarshal([]byte(src), &want)
		if ok {
			accepted++
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("fastYAML(%q) = %#v; yaml.v2: %#v, %v", src, got, want, err)
			}
		}
	}
	if accepted < 5 {
		t.Errorf("the fast path accepted only %d of the simple seeds", accepted)
	}
	for _, src := range []string{"description: yes\n", "description: |+\n  kept\n", "metadata:\n  a:\n    b: c\n", "name: x\nname: y\n", "key:\n"} {
		if _, ok := fastYAML([]byte(src)); ok {
			t.Errorf("fastYAML accepted %q, outside its subset", src)
		}
	}
}

// FuzzFastYAML: whatever the fast path accepts, yaml.v2 decodes to the
// same value.
func FuzzFastYAML(f *testing.F) {
	for _, s := range fastYAMLSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := fastYAML(data)
		if !ok {
			return
		}
		var want yaml.MapSlice
		if err := yaml.Unmarshal(data, &want); err != nil {
			t.Fatalf("fastYAML accepted %q, which yaml.v2 refuses: %v", data, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("fastYAML(%q) = %#v; yaml.v2 gives %#v", data, got, want)
		}
	})
}
