package testkit

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/switchboard-dev/switchboard/llm"
)

// LastToolResults returns the tool results of the request's last message,
// if it is a tool message.
func LastToolResults(req *llm.Request) []llm.ToolResult {
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == llm.RoleTool {
		return req.Messages[n-1].ToolResults
	}
	return nil
}

// SearchAndCall is two scripted steps: the first asks the agent's tool
// search ("search_tools") for query; the second calls the first tool the
// search found with args (or, if it found none, answers so). The call id
// of the second step is id.
func SearchAndCall(id, query string, args any) []llm.Step {
	return []llm.Step{
		llm.Calls(llm.CallTool(id+"_search", "search_tools", map[string]any{"query": query})),
		llm.React(func(req *llm.Request) llm.Step {
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
					return llm.Calls(llm.CallTool(id, found.Tools[0].Name, args))
				}
			}
			return llm.Say(fmt.Sprintf("The tool search found no tool for %q.", query))
		}),
	}
}

// stripEnvelope is a tool result's content without the agent's
// <tool_result> envelope.
func stripEnvelope(s string) string {
	if strings.HasPrefix(s, "<tool_result") {
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:]
		}
		s = strings.TrimSuffix(s, "\n</tool_result>")
	}
	return s
}
