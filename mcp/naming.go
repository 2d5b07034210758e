package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// maxToolName is the longest tool name handed to the model (the limit of
// the major providers).
const maxToolName = 64

// sanitize keeps [a-zA-Z0-9_-] and replaces anything else with '_'.
func sanitize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}

// modelToolName returns the name the model sees for tool of server:
// mcp__<server>__<tool>, sanitised to [a-zA-Z0-9_-]. A name longer than
// maxToolName is cut and given a hash suffix of the original pair.
func modelToolName(server, tool string) string {
	n := "mcp__" + sanitize(server) + "__" + sanitize(tool)
	if len(n) <= maxToolName {
		return n
	}
	return hashed(n, server, tool)
}

// hashed cuts n and appends "_" and 8 hex digits of the hash of the
// original server and tool names, so distinct pairs stay distinct.
func hashed(n, server, tool string) string {
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	suffix := "_" + hex.EncodeToString(sum[:4])
	return n[:min(len(n), maxToolName-len(suffix))] + suffix
}

// namer assigns collision-free names in a stable order.
type namer struct{ used map[string]bool }

func (n *namer) name(server, tool string) string {
	if n.used == nil {
		n.used = map[string]bool{}
	}
	name := modelToolName(server, tool)
	if n.used[name] {
		name = hashed("mcp__"+sanitize(server)+"__"+sanitize(tool), server, tool)
		for i := 0; n.used[name]; i++ {
			name = hashed(name, server, tool+strings.Repeat("\x00", i+1))
		}
	}
	n.used[name] = true
	return name
}
