package llm

import (
	"context"
	"strings"
	"testing"
)

// TestScriptedSummary: a Compaction request is answered with a summary of
// the transcript's requests and calls, within MaxTokens, and does not use
// a step of the script.
func TestScriptedSummary(t *testing.T) {
	transcript := "user: read the report\nassistant called read_file {\"path\":\"r.md\"}\nresult of read_file: lots of text\nuser: now summarise"
	for _, tc := range []struct {
		name      string
		maxTokens int
		wantLines []string
		maxBytes  int
	}{
		{"whole", 0, []string{"- user: read the report", "- assistant called read_file", "- user: now summarise"}, 4000},
		{"cut", 20, []string{"- user: read the report"}, 80},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewScripted(Say("the real answer"))
			resp, err := m.Generate(context.Background(), &Request{Compaction: true, MaxTokens: tc.maxTokens,
				Messages: []Message{{Role: RoleUser, Text: transcript}}})
			if err != nil {
				t.Fatal(err)
			}
			text := resp.Message.Text
			for _, l := range tc.wantLines {
				if !strings.Contains(text, l) {
					t.Errorf("summary %q lacks %q", text, l)
				}
			}
			if strings.Contains(text, "lots of text") {
				t.Errorf("summary %q repeats a tool result", text)
			}
			if len(text) > tc.maxBytes+len("\n…") {
				t.Errorf("summary of %d bytes, want at most %d", len(text), tc.maxBytes)
			}
			if m.Requests() != 0 {
				t.Errorf("the summary used a step (%d requests)", m.Requests())
			}
			next, err := m.Generate(context.Background(), userReq("hi"))
			if err != nil || next.Message.Text != "the real answer" {
				t.Errorf("the script's first step after a summary: %v %v", next, err)
			}
		})
	}
}

// TestSearchAndCall: the first step searches; the second calls the first
// tool found (the result arrives in its envelope), or says none was found.
func TestSearchAndCall(t *testing.T) {
	for _, tc := range []struct {
		name   string
		result ToolResult
		call   string
	}{
		{"found", ToolResult{CallID: "c1_search", Name: "search_tools",
			Content: "<tool_result tool=\"search_tools\" source=\"agent\">\n{\"tools\":[{\"name\":\"mcp__m__get-sum\"},{\"name\":\"other\"}],\"note\":\"\"}\n</tool_result>"}, "mcp__m__get-sum"},
		{"none", ToolResult{CallID: "c1_search", Name: "search_tools", Content: `{"tools":[],"note":"No tool matched"}`}, ""},
		{"error", ToolResult{CallID: "c1_search", Name: "search_tools", Content: "bad", IsError: true}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewScripted(SearchAndCall("c1", "sum", map[string]int{"a": 1})...)
			first, err := m.Generate(context.Background(), userReq("add"))
			if err != nil || len(first.Message.ToolCalls) != 1 || first.Message.ToolCalls[0].Name != "search_tools" ||
				string(first.Message.ToolCalls[0].Args) != `{"query":"sum"}` {
				t.Fatalf("first step: %+v %v", first, err)
			}
			req := userReq("add")
			req.Messages = append(req.Messages, first.Message, Message{Role: RoleTool, ToolResults: []ToolResult{tc.result}})
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
