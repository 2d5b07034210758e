package grant

import (
	"slices"
	"testing"
)

func TestGrantPatterns(t *testing.T) {
	aliases := map[string][]string{"Bash": {"mcp__shell__*"}, "WebFetch": {"fetch"}, "Everything": {"*"}}
	tests := []struct {
		in      []string
		want    []string
		skipped int
	}{
		{[]string{"mcp__files__read_file", "mcp__github__*"}, []string{"mcp__files__read_file", "mcp__github__*"}, 0},
		{[]string{"mcp__puppeteer"}, []string{"mcp__puppeteer__*"}, 0},
		{[]string{"Bash", "bash", "webfetch"}, []string{"mcp__shell__*", "fetch"}, 0},
		{[]string{"Bash(*)", "search_docs()"}, []string{"mcp__shell__*", "search_docs"}, 0},
		{[]string{"Bash(git add:*)", "Read"}, []string{"Read"}, 1},
		{[]string{"*", "?*", "Everything", "[", "mcp__x__[a"}, nil, 5},
		// Issue 15.8: patterns that match more than their author named.
		{[]string{"*_*", "?*e*", "m*", "mcp__*", "mcp__a*__*", "mcp____*", "mcp__a__*b", "mcp__a__b?", "write_fil[e]"}, nil, 9},
		{[]string{"mcp__files__read_*"}, []string{"mcp__files__read_*"}, 0},
	}
	for _, tc := range tests {
		got, skipped := Patterns(tc.in, aliases)
		if !slices.Equal(got, tc.want) || len(skipped) != tc.skipped {
			t.Errorf("Patterns(%q) = %q, skipped %q; want %q and %d skipped", tc.in, got, skipped, tc.want, tc.skipped)
		}
	}
}
