package ollama

import (
	"encoding/json"
	"strings"

	"github.com/switchboard-dev/switchboard/llm"
)

// Ollama's API does not say what a model takes (its /api/show does, per
// model, in a call of its own), so it is judged by the model's name: the
// families below. A model of another name is taken to accept text only
// and to have no thinking; Request.Reasoning is then ignored, since the
// server refuses "think" for a model that cannot.

// visionFamilies are name fragments of the models that take images.
var visionFamilies = []string{"llava", "vision", "-vl", "qwen2.5vl", "gemma3", "llama4", "minicpm-v", "moondream",
	"mistral-small3.1", "mistral-small3.2"}

// thinkingFamilies are name prefixes of the models that think.
var thinkingFamilies = []string{"deepseek-r1", "deepseek-v3.1", "qwen3", "qwq", "gpt-oss", "magistral", "phi4-reasoning"}

// modelID is a model name without its namespace ("hf.co/org/"), lower-cased.
func modelID(model string) string {
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
	}
	return strings.ToLower(strings.TrimSpace(model))
}

// thinks reports whether model takes "think".
func thinks(model string) bool {
	id := modelID(model)
	if strings.HasPrefix(id, "qwen3-coder") {
		return false
	}
	for _, f := range thinkingFamilies {
		if strings.HasPrefix(id, f) {
			return true
		}
	}
	return false
}

// capabilitiesOf is what an Ollama model takes, judged by its name: images
// for the vision families (llava, llama3.2-vision, gemma3, qwen2.5vl, ...),
// thinking for the thinking ones (deepseek-r1, qwen3, gpt-oss, ...), and
// answer schemas for every model (the server constrains decoding to the
// "format" schema). No prompt-cache figures, no tool search; the context
// window is the server's num_ctx, which the API does not report (0).
func capabilitiesOf(model string) llm.Capabilities {
	c := llm.Capabilities{StructuredOutput: true, Reasoning: thinks(model)}
	id := modelID(model)
	for _, f := range visionFamilies {
		if strings.Contains(id, f) {
			c.Accepts = []llm.PartKind{llm.PartImage}
			break
		}
	}
	return c
}

// think is the "think" value for r (nil for none): an effort for gpt-oss,
// which takes low, medium or high (a budget maps as for OpenAI: up to 2048
// low, up to 16384 medium, more high), true for the other thinking models.
func think(model string, r *llm.Reasoning) json.RawMessage {
	if r == nil || !thinks(model) {
		return nil
	}
	if !strings.HasPrefix(modelID(model), "gpt-oss") {
		return json.RawMessage("true")
	}
	e := r.Effort
	switch {
	case e == llm.EffortMinimal:
		e = llm.EffortLow
	case e == "" && r.BudgetTokens > 16384:
		e = llm.EffortHigh
	case e == "" && r.BudgetTokens > 2048:
		e = llm.EffortMedium
	case e == "" && r.BudgetTokens > 0:
		e = llm.EffortLow
	case e == "":
		return json.RawMessage("true")
	}
	switch e {
	case llm.EffortLow, llm.EffortMedium, llm.EffortHigh:
		b, _ := json.Marshal(string(e))
		return b
	}
	return json.RawMessage("true")
}
