// Package grant translates a skill's allowed-tools entries into tool-name
// patterns for agent.Call.Grant; the skills toolset and skills/internal/check share it.
package grant

import (
	"path"
	"strings"
)

// Patterns translates a skill's allowed-tools entries into tool-name
// patterns (path.Match syntax over the names the model sees) for
// agent.Call.Grant. The mapping:
//
//   - An entry with an alias in aliases (exact name, then case-insensitive)
//     becomes the alias's patterns: {"Bash": {"mcp__shell__*"}}.
//   - "mcp__server" (a whole MCP server, as Claude Code writes it) becomes
//     "mcp__server__*"; any other valid name or pattern ("mcp__github__*",
//     "search_docs") is kept as is.
//   - "Tool(*)" and "Tool()" mean the whole tool and are read as "Tool".
//   - "Tool(arguments)" (Claude Code's argument-scoped rules such as
//     "Bash(git add:*)") cannot be expressed as a tool-name pattern;
//     granting the whole tool would widen what the author asked for, so the
//     entry is skipped and reported.
//   - Only exact tool names and MCP server-scoped prefixes
//     ("mcp__server__*", "mcp__server__read_*") are granted, from entries
//     and aliases alike: any other pattern ("*", "*_*", "?*e*", "m*")
//     could pre-approve tools the author never named, so it is skipped and
//     reported, as are malformed patterns.
//
// Grants only turn "ask" into "allow": the agent's deny rules still apply.
func Patterns(entries []string, aliases map[string][]string) (patterns []string, skipped []string) {
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			patterns = append(patterns, p)
		}
	}
	for _, raw := range entries {
		e := strings.TrimSpace(raw)
		if e == "" {
			continue
		}
		if i := strings.IndexByte(e, '('); i >= 0 {
			arg := strings.TrimSpace(strings.TrimSuffix(e[i+1:], ")"))
			if !strings.HasSuffix(e, ")") || (arg != "" && arg != "*") {
				skipped = append(skipped, raw+": argument-scoped rules cannot be expressed as a tool-name pattern; not pre-approved")
				continue
			}
			e = strings.TrimSpace(e[:i])
		}
		if ps, ok := lookupAlias(aliases, e); ok {
			for _, p := range ps {
				if why := badPattern(p); why != "" {
					skipped = append(skipped, raw+" (alias "+p+"): "+why)
					continue
				}
				add(p)
			}
			continue
		}
		if strings.HasPrefix(e, "mcp__") && strings.Count(e, "__") == 1 && !strings.ContainsAny(e, "*?[") {
			e += "__*"
		}
		if why := badPattern(e); why != "" {
			skipped = append(skipped, raw+": "+why)
			continue
		}
		add(e)
	}
	return patterns, skipped
}

func lookupAlias(aliases map[string][]string, name string) ([]string, bool) {
	if ps, ok := aliases[name]; ok {
		return ps, true
	}
	for k, ps := range aliases {
		if strings.EqualFold(k, name) {
			return ps, true
		}
	}
	return nil, false
}

// badPattern says why p cannot be granted, or "". Only two forms are
// granted: an exact tool name (no pattern characters), and an MCP
// server-scoped prefix, "mcp__<server>__<prefix>*" with a literal server
// name and prefix. Judging any other pattern by what it might match is
// not possible (the tools an agent has change as servers connect), and
// patterns such as "*_*", "?*e*" or "m*" would pre-approve tools the
// skill's author never named.
func badPattern(p string) string {
	if _, err := path.Match(p, ""); err != nil {
		return "malformed pattern"
	}
	for _, r := range p {
		if r <= ' ' || r == 0x7f {
			return "holds blanks or control characters"
		}
	}
	const wide = "only exact tool names and server-scoped prefixes (mcp__server__*) are pre-approved; this pattern could match tools the skill never named; not pre-approved"
	if !strings.ContainsAny(p, "*?[\\") {
		return ""
	}
	rest, ok := strings.CutPrefix(p, "mcp__")
	if !ok {
		return wide
	}
	server, tool, ok := strings.Cut(rest, "__")
	if !ok || server == "" || strings.ContainsAny(server, "*?[\\") {
		return wide
	}
	prefix, ok := strings.CutSuffix(tool, "*")
	if !ok || strings.ContainsAny(prefix, "*?[\\") {
		return wide
	}
	return ""
}
