package agent_test

import (
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
)

// TestBreakerKey: one circuit per MCP server, skill set and peer, one per
// tool for Go tools and for sources without a name.
func TestBreakerKey(t *testing.T) {
	for _, tc := range []struct {
		src  agent.Provenance
		tool string
		want failure.Key
	}{
		{agent.Provenance{Kind: failure.SourceMCP, Name: "files", Tool: "read"}, "mcp__files__read", failure.Key{Source: failure.SourceMCP, Name: "files"}},
		{agent.Provenance{Kind: failure.SourceSkill, Name: "pdf"}, "activate_skill", failure.Key{Source: failure.SourceSkill, Name: "pdf"}},
		{agent.Provenance{Kind: failure.SourceA2A, Name: "researcher"}, "a2a__researcher", failure.Key{Source: failure.SourceA2A, Name: "researcher"}},
		{agent.Provenance{Kind: failure.SourceTool, Name: "local"}, "echo", failure.Key{Source: failure.SourceTool, Name: "echo"}},
		{agent.Provenance{}, "echo", failure.Key{Source: failure.SourceTool, Name: "echo"}},
		{agent.Provenance{Kind: failure.SourceMCP}, "orphan", failure.Key{Source: failure.SourceTool, Name: "orphan"}},
		{agent.Provenance{Kind: failure.SourceHandoff, Name: "billing"}, "handoff_to_billing", failure.Key{Source: failure.SourceHandoff, Name: "billing"}},
	} {
		if got := tc.src.BreakerKey(tc.tool); got != tc.want {
			t.Errorf("%v.BreakerKey(%q) = %v, want %v", tc.src, tc.tool, got, tc.want)
		}
	}
}
