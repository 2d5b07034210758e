package testkit

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/llm"
)

func userReq(text string) *llm.Request {
	return &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: text}}}
}

// TestSearchAndCall: the first step searches; the second calls the first
// tool found (the result arrives in its envelope), or says none was found.
func TestSearchAndCall(t *testing.T) {
	for _, tc := range []struct {
		name   string
		result llm.ToolResult
		call   string
	}{
		{"found", llm.ToolResult{CallID: "c1_search", Name: "search_tools",
			Content: "<tool_result tool=\"search_tools\" source=\"agent\">\n{\"tools\":[{\"name\":\"mcp__m__get-sum\"},{\"name\":\"other\"}],\"note\":\"\"}\n</tool_result>"}, "mcp__m__get-sum"},
		{"none", llm.ToolResult{CallID: "c1_search", Name: "search_tools", Content: `{"tools":[],"note":"No tool matched"}`}, ""},
		{"error", llm.ToolResult{CallID: "c1_search", Name: "search_tools", Content: "bad", IsError: true}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := llm.NewScripted(SearchAndCall("c1", "sum", map[string]int{"a": 1})...)
			first, err := m.Generate(context.Background(), userReq("add"))
			if err != nil || len(first.Message.ToolCalls) != 1 || first.Message.ToolCalls[0].Name != "search_tools" ||
				string(first.Message.ToolCalls[0].Args) != `{"query":"sum"}` {
				t.Fatalf("first step: %+v %v", first, err)
			}
			req := userReq("add")
			req.Messages = append(req.Messages, first.Message, llm.Message{Role: llm.RoleTool, ToolResults: []llm.ToolResult{tc.result}})
			second, err := m.Generate(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if tc.call == "" {
				if len(second.Message.ToolCalls) != 0 || !strings.Contains(second.Message.Text, "found no tool") {
					t.Fatalf("second step: %+v", second.Message)
				}
				return
			}
			if c := second.Message.ToolCalls; len(c) != 1 || c[0].Name != tc.call || c[0].ID != "c1" || string(c[0].Args) != `{"a":1}` {
				t.Fatalf("second step calls %+v, want %s", c, tc.call)
			}
		})
	}
}
