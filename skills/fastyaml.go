package skills

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v2"
)

// A fast path for the frontmatter most SKILL.md files have: top-level
// "key: value" lines whose values are quoted strings or plain text, and
// one level of nested "key: value" maps (metadata). It decodes them into
// the yaml.MapSlice yaml.v2 would produce, and declines (ok false) anything
// else, which yaml.v2 then decodes: block and flow collections, block
// scalars, multi-line values, comments after values, anchors, tags, and
// every plain value YAML could read as something other than a string
// (numbers, booleans, null, dates). FuzzFastYAML checks that whatever it
// accepts, yaml.v2 decodes to the same value.

// fastUnmarshal is the decoder of the accepted frontmatter formats: the
// fast path, else yaml.v2.
func fastUnmarshal(data []byte, v any) error {
	switch x := v.(type) {
	case *yaml.MapSlice:
		if m, ok := fastYAML(data); ok {
			*x = m
			return nil
		}
	case *lenientDecode:
		if m, ok := fastYAMLLines(data, &x.colons); ok {
			x.m = m
			return nil
		}
		x.colons = x.colons[:0]
		return yaml.Unmarshal(data, &x.m)
	}
	return yaml.Unmarshal(data, v)
}

// lenientDecode is the loader's decoding target: the map, and the lines
// (1-based) of the top-level plain values the fast path read although
// they hold an unquoted ": " (the lines the colon fix would quote; YAML
// refuses them).
type lenientDecode struct {
	m      yaml.MapSlice
	colons []int
}

// fastYAML decodes src when it is in the simple subset.
func fastYAML(src []byte) (yaml.MapSlice, bool) { return fastYAMLLines(src, nil) }

// fastYAMLLines is fastYAML, and with colons set it also reads a top-level
// plain value holding ": " as the string the colon fix would give,
// recording its line.
func fastYAMLLines(src []byte, colons *[]int) (yaml.MapSlice, bool) {
	if !plainSource(src) {
		return nil, false
	}
	lineNo := 0
	out := make(yaml.MapSlice, 0, 6)
	var nested *yaml.MapSlice
	nestIndent := 0
	listing := false // the nested block under the last key is a list
	for len(src) > 0 {
		var line []byte
		line, src = nextLF(src)
		lineNo++
		trimmed := bytes.TrimRight(line, " ")
		if len(trimmed) == 0 {
			continue
		}
		indent := 0
		for indent < len(trimmed) && trimmed[indent] == ' ' {
			indent++
		}
		if indent == 0 {
			nested = nil
			if trimmed[0] == '#' {
				continue
			}
		} else {
			if nested == nil {
				return nil, false
			}
			if nestIndent == 0 {
				nestIndent = indent
			}
			if indent != nestIndent {
				return nil, false
			}
		}
		if indent > 0 && trimmed[indent] == '-' {
			// A list item: "- value", in a list under a "key:".
			if len(*nested) > 0 || len(trimmed) < indent+3 || trimmed[indent+1] != ' ' {
				return nil, false
			}
			val, ok := fastScalar(bytes.TrimLeft(trimmed[indent+2:], " "))
			if !ok {
				return nil, false
			}
			list := &out[len(out)-1]
			items, _ := list.Value.([]any)
			list.Value = append(items, val)
			listing = true
			continue
		}
		key, rest, ok := fastKey(trimmed[indent:])
		if !ok {
			return nil, false
		}
		if indent > 0 {
			if listing || hasKey(*nested, key) {
				return nil, false // a key after list items, or twice
			}
			val, ok := fastScalar(rest)
			if !ok || len(rest) == 0 {
				return nil, false
			}
			*nested = append(*nested, yaml.MapItem{Key: key, Value: val})
			continue
		}
		if hasKey(out, key) {
			return nil, false
		}
		if len(rest) == 0 {
			// A nested map must follow, on indented lines.
			nested = &yaml.MapSlice{}
			nestIndent = 0
			listing = false
			out = append(out, yaml.MapItem{Key: key, Value: nested})
			continue
		}
		if rest[0] == '|' || rest[0] == '>' {
			val, after, ok := fastBlock(rest, src)
			if !ok {
				return nil, false
			}
			lineNo += bytes.Count(src[:len(src)-len(after)], []byte("\n"))
			src = after
			out = append(out, yaml.MapItem{Key: key, Value: val})
			continue
		}
		val, ok := fastScalar(rest)
		if !ok {
			if colons == nil || !colonPlain(rest) {
				return nil, false
			}
			val = string(rest)
			*colons = append(*colons, lineNo)
		}
		out = append(out, yaml.MapItem{Key: key, Value: val})
	}
	if len(out) == 0 {
		return nil, false
	}
	for i := range out {
		if _, ok := out[i].Value.([]any); ok {
			continue
		}
		if p, ok := out[i].Value.(*yaml.MapSlice); ok {
			if len(*p) == 0 {
				return nil, false // "key:" with nothing under it is null in YAML
			}
			out[i].Value = *p
		}
	}
	return out, true
}

// hasKey reports whether ms has the key.
func hasKey(ms yaml.MapSlice, key any) bool {
	for _, it := range ms {
		if it.Key == key {
			return true
		}
	}
	return false
}

// colonPlain reports a plain value that YAML refuses only for an unquoted
// ": " inside it, and that the colon fix reads as the whole text: it
// starts with a letter, holds ": ", and no comment.
func colonPlain(v []byte) bool {
	c := v[0]
	return (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') && bytes.Contains(v, []byte(": ")) &&
		!bytes.Contains(v, []byte(" #")) && bytes.IndexByte(v, '\t') < 0
}

// nextLF splits the first line (without its LF) from src.
func nextLF(src []byte) (line, rest []byte) {
	if i := bytes.IndexByte(src, '\n'); i >= 0 {
		return src[:i], src[i+1:]
	}
	return src, nil
}

// fastBlock decodes a top-level block scalar ("|", ">", "|-" or ">-")
// whose lines follow in src, and returns the rest of src. It declines
// indentation indicators, keep chomping, leading blank lines, trailing
// blanks, lines indented differently from the first (folded) or less
// (literal), and empty blocks.
func fastBlock(header, src []byte) (string, []byte, bool) {
	literal := header[0] == '|'
	strip := false
	switch string(header[1:]) {
	case "":
	case "-":
		strip = true
	default:
		return "", nil, false
	}
	var b strings.Builder
	indent := 0
	blanks := 0 // blank lines pending
	wrote, lastLF := false, false
	for len(src) > 0 {
		line, rest := nextLF(src)
		if len(bytes.TrimRight(line, " ")) == 0 {
			if len(line) > 0 && indent > 0 && len(line) > indent {
				return "", nil, false // blanks beyond the indentation are content
			}
			if !wrote {
				return "", nil, false
			}
			blanks++
			src = rest
			continue
		}
		n := 0
		for n < len(line) && line[n] == ' ' {
			n++
		}
		if n == 0 {
			break // the next key
		}
		if indent == 0 {
			indent = n
		}
		if n < indent || !literal && n != indent || line[len(line)-1] == ' ' {
			return "", nil, false
		}
		text := line[indent:]
		if wrote {
			switch {
			case literal:
				b.WriteByte('\n')
				for range blanks {
					b.WriteByte('\n')
				}
			case blanks > 0:
				for range blanks {
					b.WriteByte('\n')
				}
			default:
				b.WriteByte(' ')
			}
		}
		blanks = 0
		b.Write(text)
		wrote = true
		lastLF = len(src) > len(line)
		src = rest
	}
	if !wrote {
		return "", nil, false
	}
	if !strip && lastLF {
		b.WriteByte('\n')
	}
	return b.String(), src, true
}

// fastKey splits "key: rest" (or "key:"); the key must be a plain word
// YAML reads as a string.
func fastKey(line []byte) (any, []byte, bool) {
	i := bytes.IndexByte(line, ':')
	if i <= 0 {
		return nil, nil, false
	}
	key := line[:i]
	for j, c := range key {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || j > 0 && (c >= '0' && c <= '9' || c == '-')) {
			return nil, nil, false
		}
	}
	rest := line[i+1:]
	if len(rest) > 0 {
		if rest[0] != ' ' {
			return nil, nil, false
		}
		rest = bytes.TrimLeft(rest, " ")
	}
	k, kv := internKey(key)
	if !plainIsString(k) {
		return nil, nil, false
	}
	return kv, rest, true
}

// commonKeys are the frontmatter keys most files have, returned without
// allocating.
var commonKeys = []string{"name", "description", "license", "compatibility", "metadata", "allowed-tools",
	"author", "version", "tags", "category", "model", "user-invocable", "disable-model-invocation", "argument-hint"}

// commonKeyValues are commonKeys as interface values: a map item's key is
// an interface, and boxing a string allocates.
var commonKeyValues = func() []any {
	out := make([]any, len(commonKeys))
	for i, k := range commonKeys {
		out[i] = k
	}
	return out
}()

// internKey returns the key as a string and as an interface value, without
// allocating for the common keys.
func internKey(b []byte) (string, any) {
	for i, k := range commonKeys {
		if string(b) == k {
			return k, commonKeyValues[i]
		}
	}
	k := string(b)
	return k, k
}

// fastScalar decodes a one-line value: a double- or single-quoted string
// with simple escapes, or plain text that YAML reads as a string.
func fastScalar(v []byte) (string, bool) {
	if len(v) == 0 {
		return "", false
	}
	switch v[0] {
	case '"':
		if len(v) < 2 || v[len(v)-1] != '"' {
			return "", false
		}
		body := v[1 : len(v)-1]
		if !quotedIsPlainText(body) {
			return "", false
		}
		if bytes.IndexByte(body, '\\') < 0 {
			if bytes.IndexByte(body, '"') >= 0 {
				return "", false
			}
			return string(body), true
		}
		var b strings.Builder
		for i := 0; i < len(body); i++ {
			c := body[i]
			switch {
			case c == '"':
				return "", false
			case c != '\\':
				b.WriteByte(c)
				continue
			}
			if i+1 >= len(body) {
				return "", false
			}
			i++
			switch body[i] {
			case '"':
				b.WriteByte('"')
			case '\\':
				b.WriteByte('\\')
			case '/':
				b.WriteByte('/')
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				return "", false
			}
		}
		return b.String(), true
	case '\'':
		if len(v) < 2 || v[len(v)-1] != '\'' {
			return "", false
		}
		body := v[1 : len(v)-1]
		if !quotedIsPlainText(body) {
			return "", false
		}
		if bytes.IndexByte(body, '\'') < 0 {
			return string(body), true
		}
		s := string(body)
		if strings.Contains(strings.ReplaceAll(s, "''", ""), "'") {
			return "", false
		}
		return strings.ReplaceAll(s, "''", "'"), true
	}
	// Plain: no indicator first, no ": " or " #" inside, no trailing ':',
	// and text YAML does not resolve to another type.
	switch v[0] {
	case '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '%', '@', '`':
		return "", false
	}
	if bytes.Contains(v, []byte(": ")) || bytes.Contains(v, []byte(" #")) || v[len(v)-1] == ':' || bytes.IndexByte(v, '\t') >= 0 {
		return "", false
	}
	s := string(v)
	if !plainIsString(s) {
		return "", false
	}
	return s, true
}

// plainIsString reports plain text that YAML 1.1 (yaml.v2) certainly
// reads as a string: it starts with a letter, '_' or a non-ASCII
// character, is none of the boolean and null words, and holds no
// control characters.
func plainIsString(s string) bool {
	c := s[0]
	if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] == 0x7f {
			return false
		}
	}
	if c >= 0x80 {
		// Non-ASCII text first: fine unless it is a byte order mark or
		// another character yaml.v2 treats specially; leave those to it.
		if strings.HasPrefix(s, "\uFEFF") || strings.ContainsAny(s, "\u0085\u2028\u2029\uFEFF") {
			return false
		}
	}
	if len(s) <= 5 {
		switch strings.ToLower(s) {
		case "y", "n", "yes", "no", "on", "off", "true", "false", "null":
			return false
		}
	}
	return true
}

// quotedIsPlainText reports quoted text without control characters or the
// characters YAML treats as line breaks or byte order marks.
func quotedIsPlainText(b []byte) bool {
	for _, c := range b {
		if c < ' ' || c == 0x7f {
			return false
		}
	}
	return !bytes.Contains(b, []byte("\u0085")) && !bytes.Contains(b, []byte("\u2028")) && !bytes.Contains(b, []byte("\u2029")) && !bytes.Contains(b, []byte("\uFEFF"))
}

// plainSource reports valid UTF-8 without control characters (other than
// line feeds), tabs, or the characters YAML treats as line breaks or byte
// order marks.
func plainSource(src []byte) bool {
	ascii := true
	for _, c := range src {
		if c < ' ' && c != '\n' || c == 0x7f {
			return false
		}
		if c >= 0x80 {
			ascii = false
		}
	}
	if ascii {
		return true
	}
	if !utf8.Valid(src) {
		return false
	}
	// YAML's printable set, less the characters it treats as line breaks
	// or byte order marks.
	for _, r := range string(src) {
		if r >= 0x80 && r < 0xA0 || r == 0x2028 || r == 0x2029 || r == 0xFEFF || r == 0xFFFE || r == 0xFFFF {
			return false
		}
	}
	return true
}
