package llm

import "strings"

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
