package tokens

import "strings"

// DefaultWindow is the context window assumed for a model this package does
// not know (the smallest of the common current models).
const DefaultWindow = 128_000

// windows maps model-name prefixes to context windows in tokens, longest
// prefix first where prefixes overlap.
var windows = []struct {
	prefix string
	tokens int
}{
	{"claude-sonnet-4", 200_000}, {"claude-opus-4", 200_000}, {"claude-haiku-4", 200_000},
	{"claude-3", 200_000}, {"claude", 200_000},
	{"gpt-4.1", 1_047_576}, {"gpt-4o", 128_000}, {"gpt-4-turbo", 128_000}, {"gpt-4", 8_192},
	{"gpt-5", 400_000}, {"gpt-3.5-turbo", 16_385},
	{"o1", 200_000}, {"o3", 200_000}, {"o4", 200_000},
	{"gemini-2", 1_048_576}, {"gemini-1.5", 1_048_576},
	{"llama3", 128_000}, {"llama-3", 128_000}, {"qwen", 32_768}, {"mistral", 32_768},
}

// Window is the context window of the named model, in tokens: the model
// part of a provider-qualified name ("openai/gpt-4o-mini", "anthropic/
// claude-sonnet-4-5") is looked up by prefix; 0 when the model is unknown.
func Window(model string) int {
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
	}
	model = strings.ToLower(strings.TrimSpace(model))
	best, n := 0, 0
	for _, w := range windows {
		if strings.HasPrefix(model, w.prefix) && len(w.prefix) > best {
			best, n = len(w.prefix), w.tokens
		}
	}
	return n
}
