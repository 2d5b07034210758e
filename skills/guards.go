package skills

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
)

// MetadataGuards is the SKILL.md metadata key that declares the guards a
// skill's tools need, by name (names from Config.Guards, separated by
// blanks or commas):
//
//	metadata:
//	  switchboard.guards: "pii injection"
const MetadataGuards = "switchboard.guards"

// Guards returns the guard names the skill declares (metadata
// switchboard.guards), in order, without repeats.
func (s *Skill) Guards() []string {
	v := s.Metadata[MetadataGuards]
	if v == "" {
		return nil
	}
	var names []string
	for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		if !slices.Contains(names, f) {
			names = append(names, f)
		}
	}
	return names
}

// guardNames are the names of the guards a skill declares that
// Config.Guards knows.
func (t *Toolset) guardNames(s *Skill) []string {
	var names []string
	for _, name := range s.Guards() {
		if g, ok := t.cfg.Guards[name]; ok && g != nil {
			names = append(names, name)
		}
	}
	return names
}

// guardRules are the rules of the guards a skill declares that
// Config.Guards knows, at tool calls and results.
func (t *Toolset) guardRules(s *Skill) []agent.GuardRule {
	var rules []agent.GuardRule
	for _, name := range t.guardNames(s) {
		rules = append(rules, agent.GuardRule{Guard: t.cfg.Guards[name], At: agent.GuardToolCall | agent.GuardToolResult})
	}
	return rules
}

// Guard returns the guard Config.Guards names name: the agent resolves
// with it the guards a skill's activation put over the tools its
// allowed-tools grant (agent.Call.GuardTools), also when a run resumes
// from a checkpoint.
func (t *Toolset) Guard(name string) (agent.Guard, bool) {
	g, ok := t.cfg.Guards[name]
	return g, ok && g != nil
}

// withGuards wraps a skill tool's call: the skill named by its arguments
// ("skill", or "name" for activate_skill) has its declared guards applied.
func (t *Toolset) withGuards(tool string, call func(context.Context, json.RawMessage) (*agent.Result, error)) func(context.Context, json.RawMessage) (*agent.Result, error) {
	if len(t.cfg.Guards) == 0 {
		return call
	}
	return func(ctx context.Context, args json.RawMessage) (*agent.Result, error) {
		var a struct {
			Skill string `json:"skill"`
			Name  string `json:"name"`
		}
		if json.Unmarshal(args, &a) != nil {
			return call(ctx, args)
		}
		if a.Skill == "" {
			a.Skill = a.Name
		}
		return t.guarded(ctx, tool, a.Skill, args, call)
	}
}

// guarded runs a skill tool's call under the guards skill declares: its
// arguments, then its result, as the agent checks them at GuardToolCall and
// GuardToolResult.
func (t *Toolset) guarded(ctx context.Context, tool, skill string, args json.RawMessage,
	call func(context.Context, json.RawMessage) (*agent.Result, error)) (*agent.Result, error) {
	s, ok := t.Skill(skill)
	if !ok {
		return call(ctx, args)
	}
	rules := t.guardRules(s)
	if len(rules) == 0 {
		return call(ctx, args)
	}
	gs, err := agent.NewGuards(rules)
	if err != nil {
		return nil, err
	}
	c := agent.GuardCheck{Tool: tool, Source: agent.Provenance{Kind: failure.SourceSkill, Name: s.Name, Tool: tool}}
	if ac, ok := agent.CallFromContext(ctx); ok {
		c.Run = ac.Run
	}
	args, infos, err := gs.Call(ctx, c, args)
	t.logGuards(s.Name, infos)
	if err != nil {
		return nil, err
	}
	res, err := call(ctx, args)
	if err != nil {
		return nil, err
	}
	res, infos, err = gs.Result(ctx, c, res)
	t.logGuards(s.Name, infos)
	return res, err
}

// logGuards logs the verdicts of a skill's guards.
func (t *Toolset) logGuards(skill string, infos []agent.GuardInfo) {
	for _, gi := range infos {
		t.log.Info().Str("toolset", t.cfg.Name).Str("skill", skill).Str("guard", gi.Guard).Str("point", gi.Point).
			Str("action", gi.Action).Str("tool", gi.Tool).Str("reason", gi.Reason).Msg("guard")
	}
}
