package anthropic

import (
	"encoding/json"

	"github.com/switchboard-dev/switchboard/llm"
)

// Reasoning (Request.Reasoning) is Claude's extended thinking.
//
// A model before the 4.6 series thinks within a budget of tokens:
// thinking {type: enabled, budget_tokens}, the budget being
// Reasoning.BudgetTokens, or else the Effort's: minimal 1024 (the API's
// least), low 2048, medium (and no effort) 8192, high 24576. A budget below
// 1024 is raised to it. The budget is part of max_tokens, which must exceed
// it: when it does not, max_tokens becomes the budget plus the answer's
// cap (the request's MaxTokens or the Config's).
//
// A 4.6 or later model thinks adaptively (thinking {type: adaptive,
// display: summarized}, which Opus 4.7 requires) at an effort
// (output_config.effort): Reasoning.Effort, minimal being low; with only a
// budget, the effort of the nearest budget above. max_tokens is raised as
// for a budget, so that the thinking leaves room for the answer.
//
// With thinking on, the API refuses a temperature and any tool_choice but
// auto: both are dropped (see output.go for a forced answer tool).
//
// The answer's thinking and redacted_thinking blocks, with their
// signatures, are kept raw in Message.Provider and sent back as they came,
// first in their assistant turn; the thinking text (the summary the API
// shows) is Message.Reasoning, never Text or OnText.

// thinkingConfig is the request's thinking.
type thinkingConfig struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens,omitempty"`
	Display      string `json:"display,omitempty"`
}

// Budgets of thinking tokens.
const (
	minThinkingBudget = 1024
)

var effortBudget = map[llm.Effort]int{
	llm.EffortMinimal: minThinkingBudget,
	llm.EffortLow:     2048,
	llm.EffortMedium:  8192,
	llm.EffortHigh:    24576,
}

// budgetOf is the thinking budget of a reasoning setting.
func budgetOf(r *llm.Reasoning) int {
	b := r.BudgetTokens
	if b <= 0 {
		b = effortBudget[r.Effort]
	}
	if b <= 0 {
		b = effortBudget[llm.EffortMedium]
	}
	return max(b, minThinkingBudget)
}

// effortOf is the adaptive effort of a reasoning setting.
func effortOf(r *llm.Reasoning) string {
	e := r.Effort
	if e == "" && r.BudgetTokens > 0 {
		e = llm.EffortHigh
		for _, c := range []llm.Effort{llm.EffortLow, llm.EffortMedium} {
			if r.BudgetTokens <= effortBudget[c] {
				e = c
				break
			}
		}
	}
	switch e {
	case llm.EffortMinimal, llm.EffortLow:
		return "low"
	case llm.EffortHigh:
		return "high"
	}
	return "medium"
}

// think sets the request's thinking, for a model of generation g that
// thinks; a model that does not ignores r.
func think(out *anthropicRequest, g generation, r *llm.Reasoning) {
	if r == nil || !g.reasoning() {
		return
	}
	budget := budgetOf(r)
	if out.MaxTokens <= budget {
		out.MaxTokens += budget
	}
	if g.adaptiveThinking() {
		out.Thinking = &thinkingConfig{Type: "adaptive", Display: "summarized"}
		if out.OutputConfig == nil {
			out.OutputConfig = &outputConfig{}
		}
		out.OutputConfig.Effort = effortOf(r)
	} else {
		out.Thinking = &thinkingConfig{Type: "enabled", BudgetTokens: budget}
	}
	out.Temperature = nil
	if out.ToolChoice != nil && out.ToolChoice.Type != "auto" {
		out.ToolChoice = nil
	}
}

// isThinking reports whether a block is a thinking block.
func isThinking(typ string) bool { return typ == "thinking" || typ == "redacted_thinking" }

// splitThinking separates a message's raw blocks into its thinking blocks
// and the others, each in order.
func splitThinking(blocks []anthropicBlock) (thinking, other []anthropicBlock) {
	for _, b := range blocks {
		if isThinking(b.Type) {
			thinking = append(thinking, b)
		} else {
			other = append(other, b)
		}
	}
	return thinking, other
}

// thinkingBlock is a streamed thinking block as the API wants it back.
func thinkingBlock(text, signature string) json.RawMessage {
	b, _ := json.Marshal(struct {
		Type      string `json:"type"`
		Thinking  string `json:"thinking"`
		Signature string `json:"signature"`
	}{"thinking", text, signature})
	return b
}
