package bedrock

import (
	"regexp"
	"strings"

	"github.com/switchboard-dev/switchboard/llm"
)

// family is what the provider knows of a model from its id (a model id,
// an inference profile id such as "us.anthropic.claude-...", or an ARN
// holding one): the features Converse offers for it on Bedrock.
type family struct {
	// claude and nova: Anthropic Claude, Amazon Nova; neither is another
	// model served through Converse (Llama, Mistral, Cohere, ...), taken
	// to accept text and tool calls only.
	claude, nova bool
	// forced: the model takes a toolChoice naming one tool (Claude, Nova,
	// Mistral Large).
	forced bool
	// reasoning: Claude's extended thinking (Claude 3.7 and the Claude 4
	// generation).
	reasoning bool
	// cache: prompt caching with cachePoint blocks.
	cache bool
	// window is the context window in tokens (0: unknown).
	window int
}

var (
	claudeThinks = regexp.MustCompile(`claude-(3-7|(opus|sonnet|haiku)-[4-9]|[4-9])`)
	claudeCaches = regexp.MustCompile(`claude-(3-5-haiku|3-7|(opus|sonnet|haiku)-[4-9]|[4-9])`)
)

func familyOf(modelID string) family {
	id := strings.ToLower(modelID)
	switch {
	case strings.Contains(id, "anthropic.claude"):
		return family{claude: true, forced: true, reasoning: claudeThinks.MatchString(id),
			cache: claudeCaches.MatchString(id), window: 200000}
	case strings.Contains(id, "amazon.nova") && !strings.Contains(id, "sonic") && !strings.Contains(id, "canvas") && !strings.Contains(id, "reel"):
		f := family{nova: true, forced: true, cache: true, window: 300000}
		switch {
		case strings.Contains(id, "nova-micro"):
			f.window = 128000
		case strings.Contains(id, "nova-premier"):
			f.window = 1000000
		}
		return f
	case strings.Contains(id, "mistral.mistral-large"):
		return family{forced: true}
	}
	return family{}
}

// maxImageBytes is the largest image Converse takes (3.75 MB; documents
// may be 4.5 MB, but one cap serves both).
const maxImageBytes = 3_750_000

func (f family) capabilities() llm.Capabilities {
	c := llm.Capabilities{ContextWindow: f.window, StructuredOutput: f.forced, Reasoning: f.reasoning, PromptCache: f.cache}
	if f.claude || f.nova {
		c.Accepts = []llm.PartKind{llm.PartImage, llm.PartDocument}
		c.MaxPartBytes = maxImageBytes
	}
	return c
}

// forcesTools reports whether the model takes a toolChoice.
func (f family) forcesTools() bool { return f.forced }

// cachesTools reports whether the tool definitions can be cached (Claude;
// Nova caches the system prompt and messages only).
func (f family) cachesTools() bool { return f.claude && f.cache }

// toolStatus reports whether a toolResult may carry a status (Claude).
func (f family) toolStatus() bool { return f.claude }
