package openai

import (
	"strings"

	"github.com/switchboard-dev/switchboard/llm"
)

// What a model takes is known by its name (OpenAI's models page): the
// provider's API does not say. A model of another name (one served by an
// OpenAI-compatible server) is taken to accept text only, gets no
// prompt_cache_key and no reasoning_effort: such servers may refuse fields
// they do not know. Its context window is left to the agent, which knows
// the windows of OpenAI's models by name.

// maxPartBytes is the largest media part sent inline: OpenAI's limit of
// 20 MB per image (a request may carry 50 MB of images, and 32 MB of PDF
// content).
const maxPartBytes = 20 << 20

// modelID is a model name without a provider prefix ("openai/gpt-4o"
// through a router), lower-cased.
func modelID(model string) string {
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
	}
	return strings.ToLower(strings.TrimSpace(model))
}

// oSeries reports whether id is one of the o-series reasoning models (o1,
// o3, o4-mini, ...).
func oSeries(id string) bool {
	return len(id) >= 2 && id[0] == 'o' && id[1] >= '1' && id[1] <= '9'
}

// openAIFamily reports whether model is one of OpenAI's own (GPT, ChatGPT
// or o-series), which the OpenAI API serves.
func openAIFamily(model string) bool {
	id := modelID(model)
	return strings.HasPrefix(id, "gpt-") || strings.HasPrefix(id, "chatgpt-") || oSeries(id)
}

// reasoningModel reports whether model takes reasoning_effort: the
// o-series (but o1-mini and o1-preview) and GPT-5 (but its chat variants).
func reasoningModel(model string) bool {
	id := modelID(model)
	switch {
	case strings.HasPrefix(id, "o1-mini"), strings.HasPrefix(id, "o1-preview"):
		return false
	case oSeries(id):
		return true
	case strings.HasPrefix(id, "gpt-5"):
		return !strings.Contains(id, "-chat")
	}
	return false
}

// reasoningEffort is the reasoning_effort to send for r ("" for none): r's
// Effort, or one derived from its BudgetTokens (up to 2048 low, up to
// 16384 medium, more high). "minimal" exists for GPT-5 only; the o-series
// get "low".
func reasoningEffort(model string, r *llm.Reasoning) string {
	if r == nil || !reasoningModel(model) {
		return ""
	}
	e := r.Effort
	switch {
	case e == "" && r.BudgetTokens <= 0:
		return ""
	case e == "" && r.BudgetTokens <= 2048:
		e = llm.EffortLow
	case e == "" && r.BudgetTokens <= 16384:
		e = llm.EffortMedium
	case e == "":
		e = llm.EffortHigh
	}
	switch e {
	case llm.EffortMinimal:
		if oSeries(modelID(model)) {
			return string(llm.EffortLow)
		}
		return string(e)
	case llm.EffortLow, llm.EffortMedium, llm.EffortHigh:
		return string(e)
	}
	return ""
}

// capabilitiesOf is what model accepts, by its name: images and PDFs for
// the GPT-4o, GPT-4.1, GPT-4.5, GPT-5 and o-series models with vision
// (o1, o3, o4-mini; not o1-mini or o3-mini), audio for the audio models;
// reasoning for the reasoning models; the prompt cache for all of
// OpenAI's.
func capabilitiesOf(model string) llm.Capabilities {
	id := modelID(model)
	c := llm.Capabilities{StructuredOutput: true, ToolSearch: true, PromptCache: openAIFamily(model),
		Reasoning: reasoningModel(model)}
	switch {
	case strings.Contains(id, "audio") && (strings.HasPrefix(id, "gpt-4o") || strings.HasPrefix(id, "gpt-audio")):
		c.Accepts = []llm.PartKind{llm.PartAudio}
	case strings.Contains(id, "realtime"), strings.Contains(id, "transcribe"), strings.Contains(id, "tts"):
	case strings.HasPrefix(id, "gpt-4o"), strings.HasPrefix(id, "gpt-4.1"), strings.HasPrefix(id, "gpt-4.5"),
		strings.HasPrefix(id, "gpt-4-turbo"), strings.HasPrefix(id, "gpt-5"), strings.HasPrefix(id, "chatgpt-4o"),
		oSeries(id) && !strings.HasPrefix(id, "o1-mini") && !strings.HasPrefix(id, "o1-preview") && !strings.HasPrefix(id, "o3-mini"):
		c.Accepts = []llm.PartKind{llm.PartImage, llm.PartDocument}
	}
	if len(c.Accepts) > 0 {
		c.MaxPartBytes = maxPartBytes
	}
	return c
}
