// Package redact removes what looks like a secret from error text before a
// model, a log or an event shows it.
package redact

import (
	"regexp"
	"strings"
)

// secretPatterns match the secrets most often found in error text: bearer
// tokens, API keys in common shapes, passwords in URLs and key=value pairs.
var secretPatterns = []*regexp.Regexp{
	regexp.MustCompile(`(?i)(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}`),
	regexp.MustCompile(`\b(sk|pk|rk|xox[abpr]|ghp|gho|ghs|glpat|AKIA)[-_A-Za-z0-9]{12,}`),
	regexp.MustCompile(`(?i)([a-z][a-z0-9+.-]*://)[^/\s:@]+:[^/\s@]+@`),
	regexp.MustCompile(`(?i)\b(api[_-]?key|token|secret|password|passwd|authorization|auth)(["']?\s*[=:]\s*["']?)[^\s"'&,;]+`),
}

// maxModelText caps the length of error text shown to the model.
const maxModelText = 2000

// Redact removes what looks like a secret from s and caps its length. It is
// applied to every error text the model sees.
func Redact(s string) string {
	s = Secrets(s)
	if len(s) > maxModelText {
		s = strings.ToValidUTF8(s[:maxModelText], "") + "…"
	}
	return s
}

// Secrets removes what looks like a secret from s, as Redact does, without
// capping its length: for records kept whole (an evaluation's cassettes).
func Secrets(s string) string {
	for i, re := range secretPatterns {
		switch i {
		case 2:
			s = re.ReplaceAllString(s, "${1}[REDACTED]@")
		case 3:
			s = re.ReplaceAllString(s, "${1}${2}[REDACTED]")
		default:
			s = re.ReplaceAllString(s, "[REDACTED]")
		}
	}
	return s
}
