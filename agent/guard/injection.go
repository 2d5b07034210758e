package guard

import (
	"context"
	"strings"

	"github.com/switchboard-dev/switchboard/agent"
)

// InjectionConfig configures the prompt-injection heuristics.
type InjectionConfig struct {
	// Name is the guard's name (default "prompt-injection").
	Name string
	// Phrases adds phrases (matched case-insensitively) to the built-in
	// ones.
	Phrases []string
}

// Injection trips on text that addresses the model rather than informing
// it: phrases that override instructions or roles, fake conversation
// markers and system tags, and invisible Unicode (tag characters, bidi
// overrides) that hides text from a person. It is meant for tool results
// and resources (agent.GuardToolResult): heuristics, not a classifier.
type Injection struct {
	name    string
	phrases []string
	// The phrases, found ASCII case-insensitively: those shorter than
	// shortPhrase that hold a mark byte around it (marks), the others by
	// sampled windows (long).
	long  *literals
	marks *marked
}

// shortPhrase is the length under which a phrase holding a mark byte is
// found around it: the shortest of the others sets how many bytes
// literals skips.
const shortPhrase = 11

// injectionPhrases are lower-case; each is searched for in the lower-cased
// text.
var injectionPhrases = []string{
	"ignore previous instructions", "ignore all previous instructions", "ignore the previous instructions",
	"ignore prior instructions", "ignore your instructions", "ignore the above", "disregard previous instructions",
	"disregard all previous", "disregard your instructions", "forget your instructions", "forget all previous",
	"new instructions:", "you are now", "from now on you", "act as if you", "pretend you are",
	"system prompt:", "reveal your system prompt", "print your system prompt", "do not tell the user",
	"<|im_start|>", "<|im_end|>", "<|system|>", "[system]", "<system>", "</system>", "### system:",
	"### instruction", "[inst]", "<<sys>>", "\nsystem:", "\nassistant:", "\nhuman:",
}

// NewInjection returns the heuristics.
func NewInjection(cfg InjectionConfig) *Injection {
	g := &Injection{name: cfg.Name, phrases: injectionPhrases}
	if g.name == "" {
		g.name = "prompt-injection"
	}
	if len(cfg.Phrases) > 0 {
		g.phrases = append([]string(nil), injectionPhrases...)
		for _, p := range cfg.Phrases {
			if p != "" {
				g.phrases = append(g.phrases, strings.ToLower(p))
			}
		}
	}
	long := make([]string, len(g.phrases))
	var short []int
	for i, p := range g.phrases {
		if len(p) < shortPhrase && markOf(p) >= 0 {
			short = append(short, i)
		} else {
			long[i] = p // the others stay "": ignored
		}
	}
	g.long = newLiterals(long, true)
	g.marks = newMarked(g.phrases, short, true)
	return g
}

// Local marks the guard as an agent.LocalGuard: it only computes.
func (*Injection) Local() {}

// Name is the guard's name.
func (g *Injection) Name() string { return g.name }

// Check trips on the first sign found: invisible Unicode, else the
// phrase that starts first (the first listed of those starting there).
// ASCII text is read once, its case folded as it is read; other text is
// lower-cased (strings.ToLower) first.
func (g *Injection) Check(_ context.Context, c agent.GuardCheck) (agent.Verdict, error) {
	at, ascii := g.long.findASCII(c.Text)
	if m := g.marks.find(c.Text, 0); m >= 0 && (at < 0 || m < at) {
		at = m
	}
	if at < 0 && ascii {
		return agent.Pass(), nil
	}
	return g.verdict(c.Text, at, ascii), nil
}

// verdict is Check's answer on text that holds a phrase at at or is not
// ASCII.
func (g *Injection) verdict(text string, at int, ascii bool) agent.Verdict {
	if why := hidden(text); why != "" {
		return agent.Trip(why)
	}
	low := text
	if !ascii {
		low = strings.ToLower(low)
		at = g.find(low)
	}
	if at < 0 {
		return agent.Pass()
	}
	for _, p := range g.phrases {
		if hasWord(low, at, p, true) {
			return agent.Trip("the text addresses the model: " + quote(strings.TrimSpace(p)))
		}
	}
	return agent.Pass() // not reached: a phrase starts at at
}

// find is the first position where a phrase starts, or -1.
func (g *Injection) find(s string) int {
	at := g.long.find(s, 0)
	if m := g.marks.find(s, 0); m >= 0 && (at < 0 || m < at) {
		at = m
	}
	return at
}

// hidden reports invisible Unicode used to smuggle instructions: tag
// characters (U+E0000 block) and bidirectional overrides.
func hidden(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x80 {
			continue
		}
		for _, r := range s[i:] {
			switch {
			case r >= 0xE0000 && r <= 0xE007F:
				return "the text holds invisible Unicode tag characters"
			case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
				return "the text holds bidirectional override characters"
			}
		}
		return ""
	}
	return ""
}
