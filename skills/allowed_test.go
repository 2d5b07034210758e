package skills

import (
	"slices"
	"testing"
)

func TestSplitTools(t *testing.T) {
	got, commas := splitTools("Bash(git add:*) Read, Grep\tmcp__a__b")
	if !slices.Equal(got, []string{"Bash(git add:*)", "Read", "Grep", "mcp__a__b"}) || !commas {
		t.Errorf("splitTools = %q, %v", got, commas)
	}
}
