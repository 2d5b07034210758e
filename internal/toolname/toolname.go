// Package toolname builds tool names from the names of servers, peers,
// skills and agents.
package toolname

import "strings"

// Part returns s with every character that model providers refuse in tool
// names (anything but ASCII letters, digits, "_" and "-") replaced by "_".
func Part(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}
