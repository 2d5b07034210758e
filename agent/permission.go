package agent

import (
	"fmt"
	"path"
	"strings"
	"sync"
	"unicode"

	"github.com/switchboard-dev/switchboard/failure"
)

// Permission is what the permission policy decides for a tool call.
type Permission string

// Permissions.
const (
	Allow Permission = "allow"
	Ask   Permission = "ask"
	Deny  Permission = "deny"
)

// Rule decides the permission of tools whose name matches Tool, a
// path.Match pattern over the name the model sees (for example
// "mcp__files__*" or "*delete*").
type Rule struct {
	Tool       string     `json:"tool"`
	Permission Permission `json:"permission"`
}

// Permissions is the permission policy: rules by tool-name pattern. When
// several rules match, deny beats ask beats allow. Tools no rule matches are
// classified by Default.
//
// The zero value (and a nil *Permissions in Config) classifies every tool by
// the default classifier: reads are allowed, writes and deletes ask, command
// execution is denied (by a tool's annotations, else by its name's verb).
type Permissions struct {
	Rules []Rule
	// Default decides tools no rule matches; nil means the default classifier
	// (see [Permissions]).
	Default func(ToolSpec) Permission
}

// AllowAll is a policy that allows every tool. Use it only for trusted tools.
func AllowAll() *Permissions {
	return &Permissions{Rules: []Rule{{Tool: "*", Permission: Allow}}}
}

// Validate reports rules with an unknown permission or a malformed pattern.
func (p *Permissions) Validate() error {
	if p == nil {
		return nil
	}
	for i, r := range p.Rules {
		switch r.Permission {
		case Allow, Ask, Deny:
		default:
			return fmt.Errorf("permission rule %d (%q): unknown permission %q (want allow, ask or deny)", i, r.Tool, r.Permission)
		}
		if _, err := path.Match(r.Tool, ""); err != nil {
			return fmt.Errorf("permission rule %d: malformed tool pattern %q: %w", i, r.Tool, err)
		}
	}
	return nil
}

// Decide returns the permission for a call of spec. grants are patterns
// pre-approved for the session (a skill's allowed-tools): they turn ask into
// allow, never deny into anything else.
func (p *Permissions) Decide(spec ToolSpec, grants []string) Permission {
	return p.decide(spec, grants, defaultClassifier)
}

// decide is Decide with the classifier used when no rule matches and the
// policy has no Default (the agent passes a cached defaultClassifier).
func (p *Permissions) decide(spec ToolSpec, grants []string, classify func(ToolSpec) Permission) Permission {
	decision := Permission("")
	if p != nil {
		for _, r := range p.Rules {
			if ok, _ := path.Match(r.Tool, spec.Name); ok {
				decision = stricter(decision, r.Permission)
			}
		}
	}
	if decision == "" {
		if p != nil && p.Default != nil {
			decision = p.Default(spec)
		} else {
			decision = classify(spec)
		}
	}
	if decision == Ask {
		for _, g := range grants {
			if ok, _ := path.Match(g, spec.Name); ok {
				return Allow
			}
		}
	}
	return decision
}

func rank(p Permission) int {
	switch p {
	case Allow:
		return 1
	case Ask:
		return 2
	case Deny:
		return 3
	}
	return 0
}

func stricter(a, b Permission) Permission {
	if rank(b) > rank(a) {
		return b
	}
	return a
}

var (
	execWords = wordSet("exec execute shell bash sh zsh powershell cmd command commands spawn eval terminal subprocess script")
	// Writes and deletes.
	writeWords = wordSet("write create update delete remove rm edit move mv rename put post set patch insert drop send upload kill modify replace append mkdir save truncate overwrite push merge commit deploy install")
	readWords  = wordSet("read get list search find fetch query view show describe stat info ls cat head tail grep glob lookup echo count check status inspect preview browse open load")
)

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// nameWords splits a tool name into lower-case words at _, -, ., / and
// camelCase boundaries.
func nameWords(name string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	prevLower := false
	for _, r := range name {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
			prevLower = false
			continue
		case unicode.IsUpper(r) && prevLower:
			flush()
		}
		cur = append(cur, r)
		prevLower = unicode.IsLower(r)
	}
	flush()
	return words
}

// defaultClassifier mirrors the common host practice: tools that execute
// commands are denied, tools that write or delete ask, tools that only read
// are allowed, and anything unclassifiable asks. It looks at the tool's
// hints (Executes, Destructive, ReadOnly) and at the words of its source
// name.
//
// Hints are believed as given when Go code in this process set them (the
// provenance kinds tool, agent, handoff and skills). Hints from
// anywhere else (an MCP server's annotations, an A2A peer, a toolset of
// another or no kind) may raise the friction but lower it only where
// nothing else says danger: a read-only hint allows a tool whose name says
// nothing, never one whose name says it executes (denied) or writes
// (asks).
func defaultClassifier(spec ToolSpec) Permission {
	if spec.Executes {
		return Deny
	}
	byName := classifyName(spec)
	if trustsHints(spec.Source.Kind) {
		switch {
		case spec.Destructive:
			return Ask
		case spec.ReadOnly:
			return Allow
		}
	} else {
		switch {
		case spec.Destructive:
			return stricter(Ask, byName)
		case spec.ReadOnly && byName == "":
			return Allow
		}
	}
	if byName == "" {
		return Ask
	}
	return byName
}

// trustsHints reports whether the hints of tools of a provenance kind are
// set by Go code in this process rather than by a server or peer.
func trustsHints(kind failure.Source) bool {
	switch kind {
	case failure.SourceTool, failure.SourceAgent, failure.SourceHandoff, failure.SourceSkill:
		return true
	}
	return false
}

// classifyName is the name rule: Deny for a name with a word that says it
// executes, Ask for one that says it writes or deletes, Allow for one that
// says it reads, and "" for a name that says none of these. The name is the
// tool's own at its source when known.
func classifyName(spec ToolSpec) Permission {
	name := spec.Source.Tool
	if name == "" {
		name = spec.Name
	}
	words := nameWords(name)
	for _, w := range words {
		if execWords[w] {
			return Deny
		}
	}
	for _, w := range words {
		if writeWords[w] {
			return Ask
		}
	}
	for _, w := range words {
		if readWords[w] {
			return Allow
		}
	}
	return ""
}

// classKey is what defaultClassifier looks at.
type classKey struct {
	name, sourceTool                string
	kind                            failure.Source
	readOnly, destructive, executes bool
}

// classCache memoises defaultClassifier, a pure function of classKey that
// splits names into words on every call otherwise.
type classCache struct {
	mu sync.Mutex
	m  map[classKey]Permission
}

func (c *classCache) classify(spec ToolSpec) Permission {
	k := classKey{spec.Name, spec.Source.Tool, spec.Source.Kind, spec.ReadOnly, spec.Destructive, spec.Executes}
	c.mu.Lock()
	p, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return p
	}
	p = defaultClassifier(spec)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= 4096 {
		c.m = map[classKey]Permission{}
	}
	c.m[k] = p
	c.mu.Unlock()
	return p
}
