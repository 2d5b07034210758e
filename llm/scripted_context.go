package llm

import (
	"encoding/json"
	"fmt"
	"strings"
)

// searchToolName is the agent's tool search tool (agent/toolsearch.go).
const searchToolName = "search_tools"

// SearchAndCall is two scripted steps: the first asks the agent's tool
// search ("search_tools") for query; the second calls the first tool the
// search found with args (or, if it found none, answers so). The call id
// of the second step is id.
func SearchAndCall(id, query string, args any) []Step {
	return []Step{
		Calls(CallTool(id+"_search", searchToolName, map[string]any{"query": query})),
		React(func(req *Request) Step {
			for _, r := range LastToolResults(req) {
				var found struct {
					Tools []struct {
						Name string `json:"name"`
					} `json:"tools"`
				}
				if r.IsError || json.Unmarshal([]byte(stripEnvelope(r.Content)), &found) != nil {
					continue
				}
				if len(found.Tools) > 0 {
					return Calls(CallTool(id, found.Tools[0].Name, args))
				}
			}
			return Say(fmt.Sprintf("The tool search found no tool for %q.", query))
		}),
	}
}

// scriptedSummary answers a Compaction request: the transcript's lines
// that say what the user asked and which tools ran, cut to MaxTokens (as
// four bytes a token), so tests can see what a summary kept.
func scriptedSummary(req *Request) *Response {
	limit := 4 * req.MaxTokens
	if limit <= 0 {
		limit = 4000
	}
	var b strings.Builder
	b.WriteString("Scripted summary of the earlier conversation:")
	for _, m := range req.Messages {
		for _, line := range strings.Split(m.Text, "\n") {
			if !strings.HasPrefix(line, "user: ") && !strings.HasPrefix(line, "assistant called ") {
				continue
			}
			line = firstLine(line)
			if b.Len()+len(line)+3 > limit {
				b.WriteString("\n…")
				return summaryResponse(b.String())
			}
			b.WriteString("\n- " + line)
		}
	}
	return summaryResponse(b.String())
}

func summaryResponse(text string) *Response {
	return &Response{Message: Message{Role: RoleAssistant, Text: text}, StopReason: "end_turn",
		Usage: Usage{OutputTokens: len(strings.Fields(text))}}
}
