package skills

import (
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
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
	f.Add([]byte("name: x\ndescription: Use when: the user asks\nlicense: MIT\nother: a: b: c\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var lines []int
		if got, ok := fastYAMLLines(data, &lines); ok && len(lines) > 0 {
			want, fixed, err := slowColonFix(data)
			if err != nil || !reflect.DeepEqual(got, want) || !slices.Equal(lines, fixed) {
				t.Fatalf("fastYAMLLines(%q) = %#v, lines %v; the colon fix over yaml.v2 gives %#v, lines %v, %v", data, got, lines, want, fixed, err)
			}
		}
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

// slowColonFix is the colon fix over yaml.v2 alone: decode, and while
// YAML refuses a line for an unquoted ": ", quote that line's value.
func slowColonFix(src []byte) (yaml.MapSlice, []int, error) {
	var lines []int
	for range 16 {
		var m yaml.MapSlice
		err := yaml.Unmarshal(src, &m)
		if err == nil {
			return m, lines, nil
		}
		if !strings.Contains(err.Error(), "mapping values are not allowed") {
			return nil, lines, err
		}
		n := 1 // as decodeYAML: yaml.v2 names no line for the first
		if mm := yamlErrLine.FindStringSubmatch(err.Error()); mm != nil {
			n, _ = strconv.Atoi(mm[1])
		}
		fixed, _, ok := quoteLine(src, n)
		if !ok {
			return nil, lines, err
		}
		src = fixed
		lines = append(lines, n)
	}
	return nil, lines, errors.New("too many fixes")
}
