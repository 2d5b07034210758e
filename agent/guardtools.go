package agent

import (
	"fmt"
	"slices"

	"github.com/switchboard-dev/switchboard/failure"
)

// GuardedTools is what a tool put over other tools with Call.GuardTools,
// as a checkpoint keeps it (Checkpoint.Guarded): the toolset of the tool,
// which resolves the guards' names (its Guard method, see Toolset), the
// patterns of the tools guarded and the names.
type GuardedTools struct {
	Toolset  string   `json:"toolset"`
	Patterns []string `json:"patterns"`
	Guards   []string `json:"guards"`
}

// guardSource is a toolset with the optional Guard method (see Toolset).
type guardSource interface {
	Guard(name string) (Guard, bool)
}

// guardsOf resolves g's names through its toolset into rules at tool calls
// and results.
func (a *Agent) guardsOf(g GuardedTools) (*guardSet, error) {
	var src guardSource
	if a != nil {
		for _, ts := range a.toolsets {
			if ts.Name() == g.Toolset {
				src, _ = ts.(guardSource)
				break
			}
		}
	}
	if src == nil {
		return nil, &failure.Error{Kind: failure.Config, Source: failure.SourceAgent, Name: g.Toolset, Op: "guard tools",
			Message: fmt.Sprintf("toolset %q has no Guard method to resolve the guards %q over the tools %q (Call.GuardTools)", g.Toolset, g.Guards, g.Patterns)}
	}
	rules := make([]GuardRule, 0, len(g.Guards))
	for _, name := range g.Guards {
		gd, ok := src.Guard(name)
		if !ok || gd == nil {
			return nil, &failure.Error{Kind: failure.Config, Source: failure.SourceAgent, Name: g.Toolset, Op: "guard tools",
				Message: fmt.Sprintf("toolset %q knows no guard %q (over the tools %q, Call.GuardTools)", g.Toolset, name, g.Patterns)}
		}
		rules = append(rules, GuardRule{Guard: gd, At: GuardToolCall | GuardToolResult})
	}
	return newGuardSet(rules)
}

// guardedSnapshot is the session's guards over tools, as a checkpoint
// keeps them.
func (g *grants) guardedSnapshot() []GuardedTools {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []GuardedTools
	for _, gt := range g.guarded {
		out = append(out, GuardedTools{Toolset: gt.rec.Toolset, Patterns: slices.Clone(gt.rec.Patterns), Guards: slices.Clone(gt.rec.Guards)})
	}
	return out
}

// setGuarded replaces the session's guards over tools by recs, resolved
// through a's toolsets; a record that does not resolve is a Config
// failure, and nothing is replaced.
func (g *grants) setGuarded(a *Agent, recs []GuardedTools) error {
	guarded := make([]guardedTools, 0, len(recs))
	for _, rec := range recs {
		gs, err := a.guardsOf(rec)
		if err != nil {
			return err
		}
		guarded = append(guarded, guardedTools{rec: rec, set: gs})
	}
	g.mu.Lock()
	g.guarded = guarded
	g.guarding.Store(len(guarded) > 0)
	g.mu.Unlock()
	return nil
}

// unguarded are the patterns not among those of guarded: the grants a
// session record keeps. A session record does not keep the guards, so the
// tools granted with guards are not pre-approved in a session loaded from
// it until the tool that granted them (a skill's activation) runs again.
func unguarded(patterns []string, guarded []GuardedTools) []string {
	if len(guarded) == 0 {
		return patterns
	}
	var out []string
	for _, p := range patterns {
		if !slices.ContainsFunc(guarded, func(g GuardedTools) bool { return slices.Contains(g.Patterns, p) }) {
			out = append(out, p)
		}
	}
	return out
}

// sessionGrants are the grants a session record keeps (unguarded).
func (g *grants) sessionGrants() []string {
	return unguarded(g.snapshot(), g.guardedSnapshot())
}

// setFromSession sets the grants from a session record's, keeping those
// of the patterns this session guards (which the record does not keep).
func (g *grants) setFromSession(p []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := slices.Clone(p)
	for _, q := range g.patterns {
		if !slices.Contains(out, q) && slices.ContainsFunc(g.guarded, func(gt guardedTools) bool { return slices.Contains(gt.rec.Patterns, q) }) {
			out = append(out, q)
		}
	}
	g.patterns = out
}
