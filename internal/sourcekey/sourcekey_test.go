package sourcekey

import (
	"testing"

	"github.com/switchboard-dev/switchboard/failure"
)

func TestKey(t *testing.T) {
	tests := []struct {
		kind, name, tool string
		want             failure.Key
	}{
		{"mcp", "files", "mcp__files__read", failure.Key{Source: failure.SourceMCP, Name: "files"}},
		{"skill", "pdf", "activate_skill", failure.Key{Source: failure.SourceSkill, Name: "pdf"}},
		{"a2a", "researcher", "a2a__researcher", failure.Key{Source: failure.SourceA2A, Name: "researcher"}},
		{"local", "local", "echo", failure.Key{Source: failure.SourceTool, Name: "echo"}},
		{"", "", "echo", failure.Key{Source: failure.SourceTool, Name: "echo"}},
		{"mcp", "", "orphan", failure.Key{Source: failure.SourceTool, Name: "orphan"}},
	}
	for _, tt := range tests {
		if got := Key(tt.kind, tt.name, tt.tool); got != tt.want {
			t.Errorf("Key(%q, %q, %q) = %v, want %v", tt.kind, tt.name, tt.tool, got, tt.want)
		}
	}
}
