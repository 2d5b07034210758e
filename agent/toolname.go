package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// maxToolName is the longest tool name the major model providers accept.
const maxToolName = 64

// ToolName returns the tool name made of parts, in the form model providers
// accept: in each part, every character but ASCII letters, digits, "_" and
// "-" becomes "_" (and an empty part is "_"); the parts are joined by "__";
// a name over 64 characters is cut and ends in "_" and 8 hex digits of a
// hash of the parts, so that distinct parts keep distinct names. The
// toolsets of this module name their tools with it (ToolName("mcp",
// "my server", "get.file") is "mcp__my_server__get_file"); a [Toolset] of
// its own can too.
func ToolName(parts ...string) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteString("__")
		}
		if p == "" {
			b.WriteByte('_')
		}
		for _, r := range p {
			if r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
				b.WriteRune(r)
			} else {
				b.WriteByte('_')
			}
		}
	}
	n := b.String()
	if len(n) <= maxToolName {
		return n
	}
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	suffix := "_" + hex.EncodeToString(sum[:4])
	return n[:maxToolName-len(suffix)] + suffix
}
