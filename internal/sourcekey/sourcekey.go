// Package sourcekey names the failure source and circuit-breaker key of a
// tool's provenance, so that an agent's runs and mcp/server, which calls
// tools outside a run, share one circuit per MCP server, skill set or peer.
package sourcekey

import "github.com/switchboard-dev/switchboard/failure"

// Source is the failure source of a provenance kind ("mcp", "a2a",
// "skill", "local" or empty).
func Source(kind string) failure.Source {
	switch kind {
	case "", "local":
		return failure.SourceTool
	case "skill":
		return failure.SourceSkill
	}
	return failure.Source(kind)
}

// Key is the circuit-breaker key of a tool named tool from source name of
// provenance kind: the source for MCP servers, skills and peers, the tool
// itself for local tools.
func Key(kind, name, tool string) failure.Key {
	if kind == "" || kind == "local" || name == "" {
		return failure.Key{Source: failure.SourceTool, Name: tool}
	}
	return failure.Key{Source: Source(kind), Name: name}
}
