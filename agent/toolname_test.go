package agent_test

import (
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
)

func TestToolName(t *testing.T) {
	long := strings.Repeat("x", 80)
	for _, tc := range []struct {
		parts []string
		want  string
	}{
		{[]string{"files"}, "files"},
		{[]string{"my server.v2"}, "my_server_v2"},
		{[]string{"ünï"}, "_n_"},
		{[]string{"a-b_c"}, "a-b_c"},
		{[]string{""}, "_"},
		{[]string{"mcp", "github", "create_issue"}, "mcp__github__create_issue"},
		{[]string{"mcp", "s", ""}, "mcp__s___"},
		{[]string{"a2a", "peer", "summarise.v2"}, "a2a__peer__summarise_v2"},
		{[]string{"handoff_to_billing bot"}, "handoff_to_billing_bot"},
		{[]string{"mcp", "srv", strings.Repeat("y", 54)}, "mcp__srv__" + strings.Repeat("y", 54)}, // 64: kept
	} {
		if got := agent.ToolName(tc.parts...); got != tc.want {
			t.Errorf("ToolName(%q) = %q, want %q", tc.parts, got, tc.want)
		}
	}
	// Over 64 characters: cut, with a hash suffix that keeps distinct
	// parts apart (also parts that sanitise alike).
	names := map[string]bool{}
	for _, parts := range [][]string{{"mcp", "srv", long + "a"}, {"mcp", "srv", long + "b"}, {"mcp", "srv", long + "."}, {"mcp", "srv", long + "_"}, {"mcp", "srv" + long, "t"}} {
		n := agent.ToolName(parts...)
		if len(n) != 64 || names[n] || strings.Trim(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" {
			t.Errorf("ToolName(%q) = %q (%d characters)", parts, n, len(n))
		}
		names[n] = true
		if again := agent.ToolName(parts...); again != n {
			t.Errorf("ToolName is not stable: %q then %q", n, again)
		}
	}
}
