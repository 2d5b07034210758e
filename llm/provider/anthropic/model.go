package anthropic

import (
	"regexp"
	"strconv"

	"github.com/switchboard-dev/switchboard/llm"
)

// generation is a Claude model's version, read from its name: what decides
// which request features it takes (structured outputs, adaptive thinking).
type generation struct {
	major, minor int
}

// atLeast reports whether g is version major.minor or later.
func (g generation) atLeast(major, minor int) bool {
	return g.major > major || (g.major == major && g.minor >= minor)
}

// Model names: "claude-sonnet-4-5", "claude-sonnet-4-5-20250929",
// "claude-opus-4-20250514", "claude-sonnet-5" (family first, since the 4
// series) and "claude-3-7-sonnet-latest" (version first, before).
var (
	familyFirst  = regexp.MustCompile(`^claude-[a-z]+-(\d+)(?:-(\d))?(?:-|$)`)
	versionFirst = regexp.MustCompile(`^claude-(\d+)(?:-(\d))?-[a-z]+`)
)

// generationOf reads the version from a model's name; a name it cannot read
// (a custom deployment's) is generation 0.0, which takes only the features
// every model has.
func generationOf(model string) generation {
	m := familyFirst.FindStringSubmatch(model)
	if m == nil {
		m = versionFirst.FindStringSubmatch(model)
	}
	if m == nil {
		return generation{}
	}
	g := generation{}
	g.major, _ = strconv.Atoi(m[1])
	if m[2] != "" {
		g.minor, _ = strconv.Atoi(m[2])
	}
	return g
}

// structuredOutputs reports whether the model takes output_config.format
// (generally available from Claude Sonnet 4.5, Opus 4.5 and Haiku 4.5 on).
func (g generation) structuredOutputs() bool { return g.atLeast(4, 5) }

// adaptiveThinking reports whether the model reasons by effort
// (thinking.type "adaptive" with output_config.effort) rather than by a
// budget of tokens: from the 4.6 models on (Opus 4.7 refuses a budget).
func (g generation) adaptiveThinking() bool { return g.atLeast(4, 6) }

// reasoning reports whether the model thinks at all (extended thinking
// began with Claude 3.7 Sonnet).
func (g generation) reasoning() bool { return g.atLeast(3, 7) }

// Limits of the Messages API.
const (
	// maxImageBase64 is the API's cap on one image, which it applies to the
	// base64 text (5 MB): 3.75 MB of bytes.
	maxImageBase64 = 5 << 20
	maxPartBytes   = maxImageBase64 / 4 * 3
)

// Capabilities says what this model takes: images and documents (PDF and
// text) in user messages and tool results, up to the API's per-image cap;
// deferred tools through the provider's tool search; a prompt cache (the
// breakpoints of cache.go); an enforced answer schema on the models with
// structured outputs (others get a forced tool, asked but not enforced);
// reasoning on the models that think. Endpoint is the base URL.
func (a *anthropicModel) Capabilities() llm.Capabilities {
	return llm.Capabilities{
		Accepts:          []llm.PartKind{llm.PartImage, llm.PartDocument},
		MaxPartBytes:     maxPartBytes,
		StructuredOutput: a.family.structuredOutputs(),
		Reasoning:        a.family.reasoning(),
		ToolSearch:       true,
		PromptCache:      true,
		Endpoint:         a.endpoint,
	}
}
