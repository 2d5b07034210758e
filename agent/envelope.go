package agent

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The result envelope: every tool result reaches the model as
//
//	<tool_result tool="…" source="…" error="true">
//	…
//	</tool_result>
//
// Everything in it comes from outside: the tool's name (an MCP server's, a
// model's), its source, the result's text. The header's attribute values
// are escaped as XML attribute values, so they can hold no quote, no tag
// and no line break; the body is defused, so it can hold no tag that opens
// or closes an envelope. The rendered envelope therefore has exactly one
// opening and one closing tool_result tag, and nothing else in its header.

// envelope renders a result: tool and source in the header, text (cut to
// limit bytes, with a note) as the body.
func envelope(tool, source, text string, isErr bool, limit int) string {
	if limit > 0 && len(text) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut-- // do not split a character
		}
		text = text[:cut] + "\n[truncated: " + strconv.Itoa(cut) + " of " + strconv.Itoa(len(text)) + " bytes shown]"
	}
	text = defuse(text)
	var b strings.Builder
	b.Grow(len(`<tool_result tool="" source="" error="true">`) + len(tool) + len(source) + len(text) + len("\n\n</tool_result>"))
	b.WriteString(`<tool_result tool="`)
	escapeAttr(&b, tool)
	b.WriteString(`" source="`)
	escapeAttr(&b, source)
	if isErr {
		b.WriteString(`" error="true">`)
	} else {
		b.WriteString(`">`)
	}
	b.WriteByte('\n')
	b.WriteString(text)
	b.WriteString("\n</tool_result>")
	return b.String()
}

// escapeAttr writes s as the value of a double-quoted XML attribute: the
// five markup characters as entities; tab, line breaks, DEL, C1 controls
// and invisible format characters (bidirectional overrides, zero-width
// characters) as character references, so that none of them can break or
// disguise the header; and what XML cannot carry at all (other C0
// controls, U+FFFE, U+FFFF, invalid UTF-8) as U+FFFD.
func escapeAttr(b *strings.Builder, s string) {
	last := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf && c >= 0x20 && c != 0x7f && c != '&' && c != '<' && c != '>' && c != '"' && c != '\'' {
			i++
			continue
		}
		r, size := rune(c), 1
		if c >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
		}
		esc := attrEscape(r, size)
		if esc == "" {
			i += size
			continue
		}
		b.WriteString(s[last:i])
		b.WriteString(esc)
		i += size
		last = i
	}
	b.WriteString(s[last:])
}

// attrEscape is the escape of the character r (size bytes in the input),
// or "" when it is written as is.
func attrEscape(r rune, size int) string {
	switch r {
	case '&':
		return "&amp;"
	case '<':
		return "&lt;"
	case '>':
		return "&gt;"
	case '"':
		return "&quot;"
	case '\'':
		return "&#39;"
	case '\t', '\n', '\r':
		return "&#x" + strconv.FormatInt(int64(r), 16) + ";"
	}
	switch {
	case r == utf8.RuneError && size == 1, r < 0x20, r == 0xFFFE, r == 0xFFFF:
		return "&#xfffd;"
	case r == 0x7f, unicode.IsControl(r), unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp):
		return "&#x" + strconv.FormatInt(int64(r), 16) + ";"
	}
	return ""
}

// tagName is the element name of the envelope.
const tagName = "tool_result"

// defuse neutralises every tag in text that could open or close an
// envelope: a "<" followed, after optional slashes, spaces, control or
// format characters, by tool_result in any ASCII case becomes "&lt;".
func defuse(text string) string {
	if !containsFold(text, tagName) {
		return text
	}
	var b strings.Builder
	last := 0
	for i := 0; i+len(tagName) <= len(text); i++ {
		if !hasFoldAt(text, i, tagName) {
			continue
		}
		if lt := tagOpener(text[:i]); lt >= last {
			b.WriteString(text[last:lt])
			b.WriteString("&lt;")
			last = lt + 1
		}
		i += len(tagName) - 1
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// tagOpener returns the index of the "<" that makes a tag of the name
// following before (ignoring slashes, spaces, control and format
// characters between them), or -1.
func tagOpener(before string) int {
	for j := len(before); j > 0; {
		r, size := utf8.DecodeLastRuneInString(before[:j])
		switch {
		case r == '<':
			return j - size
		case r == '/', ignorable(r, size):
		default:
			return -1
		}
		j -= size
	}
	return -1
}

// ignorable reports whether a reader might skip r between "<" and a tag
// name: white space, control and format characters, invalid bytes.
func ignorable(r rune, size int) bool {
	return (r == utf8.RuneError && size == 1) || unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
}

// containsFold reports whether s contains the lower-case ASCII word w in
// any case, without allocating.
func containsFold(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if hasFoldAt(s, i, w) {
			return true
		}
	}
	return false
}

// hasFoldAt reports whether s has the lower-case ASCII word w at i, in any
// ASCII case.
func hasFoldAt(s string, i int, w string) bool {
	if i+len(w) > len(s) {
		return false
	}
	for j := 0; j < len(w); j++ {
		c := s[i+j]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != w[j] {
			return false
		}
	}
	return true
}
