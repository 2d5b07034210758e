package check

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// measure returns the lines of a body and its estimated tokens
// (characters / 4, rounded up: the usual rule of thumb for English text).
func measure(md string) (lines, tokens int) {
	lines = strings.Count(md, "\n")
	if md != "" && !strings.HasSuffix(md, "\n") {
		lines++
	}
	return lines, (utf8.RuneCountInString(md) + 3) / 4
}

// whenRE finds the part of a description that says when to use the skill.
var whenRE = regexp.MustCompile(`(?i)\b(when|whenever|if|before|after|use (it |this (skill )?)?(for|to|on|with|in)|used (for|to|on|with|in)|trigger(s|ed)?)\b`)

// describesWhen reports whether a description says when to use the skill
// ("Use when…", "when", "if", "use for/to", "trigger"…).
func describesWhen(desc string) bool { return whenRE.MatchString(desc) }

// keyLine returns the 1-based line of a top-level frontmatter key in a
// SKILL.md (LF line endings), or 0.
func keyLine(raw, key string) int {
	open := false
	for i, line := range strings.Split(strings.TrimPrefix(raw, "\ufeff"), "\n") {
		t := strings.TrimRight(line, " \t")
		if !open {
			if t == "---" || t == "---yaml" {
				open = true
			} else if t != "" {
				return 0
			}
			continue
		}
		if t == "---" {
			return 0
		}
		if rest, ok := strings.CutPrefix(line, key); ok && strings.HasPrefix(strings.TrimLeft(rest, " \t"), ":") {
			return i + 1
		}
	}
	return 0
}

// thousands writes n with commas between groups of three digits.
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
