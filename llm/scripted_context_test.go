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

