package testkit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// RefTool is a tool as a reference MCP server listed it.
type RefTool struct {
	Server      string
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// ReferenceTools returns the tools of the reference MCP servers recorded in
// agent/internal/toolsearch/testdata/reference-tools.json (server-everything
// 2026.8.31, go-sdk v1.8.0's memory and sequentialthinking examples), by
// server name and then in listing order.
func ReferenceTools(t testing.TB) []RefTool {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		p := filepath.Join(dir, "internal", "toolsearch", "testdata", "reference-tools.json")
		if b, err := os.ReadFile(p); err == nil {
			var servers map[string][]RefTool
			if err := json.Unmarshal(b, &servers); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			var names []string
			for s := range servers {
				names = append(names, s)
			}
			slices.Sort(names)
			var out []RefTool
			for _, s := range names {
				for _, tl := range servers[s] {
					tl.Server = s
					out = append(out, tl)
				}
			}
			return out
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("agent/internal/toolsearch/testdata/reference-tools.json not found above the working directory")
		}
		dir = parent
	}
}
