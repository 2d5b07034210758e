package skills

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/adrg/frontmatter"
	"gopkg.in/yaml.v2"
)

// Frontmatter handling.
//
// The formats we accept are described with github.com/adrg/frontmatter's
// Format type (start and end delimiters, and yaml.v2 as the decoder, the one
// adrg uses), and only YAML ones: a TOML (+++, ---toml) or JSON (;;;,
// ---json, {) opener is recognised by the delimiters of adrg's other default
// formats and refused with a clear error rather than decoded by accident.
//
// We do not hand whole files to frontmatter.Parse, for two reasons found in
// adrg v0.2.0: it returns no error and no metadata on a BOM, CR-only line
// endings or a missing closing delimiter, and it compares TrimSpace'd lines
// with the delimiter, so an indented --- inside a YAML block scalar ends the
// frontmatter early. It also reads the whole file through a bufio.Reader and
// copies every line, while startup must read only the frontmatter. So the
// file is read in small chunks up to the closing delimiter, which counts only
// at column 0 (trailing blanks allowed); a BOM is stripped and CRLF or CR
// line endings normalised to LF; and the YAML block is then decoded with the
// accepted Format's Unmarshal function. frontmatter.Parse with the same
// YAML-only format list is the oracle of the differential fuzz test (on the
// inputs where its traps do not apply) and the "as-is" side of the benchmark.

// yamlFormats are the only accepted frontmatter formats.
// Their decoder is adrg's extension point, an UnmarshalFunc: fastUnmarshal
// decodes the common simple frontmatter itself and hands the rest to
// yaml.v2 (see fastyaml.go).
var yamlFormats = []*frontmatter.Format{
	frontmatter.NewFormat("---", "---", fastUnmarshal),
	frontmatter.NewFormat("---yaml", "---", fastUnmarshal),
}

// refusedFormats are adrg's other default formats, by opening delimiter.
var refusedFormats = []struct{ start, name string }{
	{"+++", "TOML"}, {"---toml", "TOML"}, {";;;", "JSON"}, {"---json", "JSON"}, {"{", "JSON"},
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// header is a SKILL.md frontmatter as found in the file's first bytes.
type header struct {
	// yaml is the YAML between the delimiters, with LF line endings.
	yaml []byte
	// format is the accepted format that matched.
	format *frontmatter.Format
	// end is the offset in the raw data just past the closing delimiter
	// line.
	end int
	// firstLine is the file line of yaml's first line; endLine is the file
	// line of the closing delimiter.
	firstLine, endLine int
	// Quirks found on the way.
	bom, crlf, cr bool
	leadingBlank  int
}

// line terminators
const (
	termNone = iota
	termLF
	termCRLF
	termCR
)

// nextLine returns the line starting at p (without its terminator), the
// offset of the next line and the terminator. ok is false when more data is
// needed to tell (or, at EOF, when p is at the end).
func nextLine(data []byte, p int, atEOF bool) (line []byte, next, term int, ok bool) {
	rest := data[p:]
	i := bytes.IndexAny(rest, "\r\n")
	if i < 0 {
		if atEOF && len(rest) > 0 {
			return rest, len(data), termNone, true
		}
		return nil, p, termNone, false
	}
	if rest[i] == '\n' {
		return rest[:i], p + i + 1, termLF, true
	}
	if i+1 < len(rest) {
		if rest[i+1] == '\n' {
			return rest[:i], p + i + 2, termCRLF, true
		}
		return rest[:i], p + i + 1, termCR, true
	}
	if atEOF {
		return rest[:i], p + i + 1, termCR, true
	}
	return nil, p, termNone, false
}

func trimBlanks(b []byte) []byte { return bytes.TrimRight(b, " \t") }

// scanHeader finds the frontmatter at the start of data. need is true when
// data ends before the closing delimiter and more may follow (atEOF false).
// Errors are errNoFrontmatter, errNotYAML (with the format's name) and
// errUnclosed.
func scanHeader(data []byte, atEOF bool) (h header, need bool, notYAML string, err error) {
	p := 0
	if bytes.HasPrefix(data, utf8BOM) {
		h.bom = true
		p = len(utf8BOM)
	} else if !atEOF && len(data) < len(utf8BOM) {
		return h, true, "", nil
	}
	lineNo := 0
	note := func(term int) {
		switch term {
		case termCRLF:
			h.crlf = true
		case termCR:
			h.cr = true
		}
	}
	// The opening delimiter, after any blank lines.
	for {
		line, next, term, ok := nextLine(data, p, atEOF)
		if !ok {
			if atEOF {
				return h, false, "", errNoFrontmatter
			}
			return h, true, "", nil
		}
		lineNo++
		note(term)
		p = next
		first := trimBlanks(line)
		if len(first) == 0 {
			h.leadingBlank++
			continue
		}
		for _, f := range yamlFormats {
			if string(first) == f.Start {
				h.format = f
			}
		}
		if h.format == nil {
			for _, r := range refusedFormats {
				if string(first) == r.start || (r.start == "{" && first[0] == '{') {
					return h, false, r.name, errNotYAML
				}
			}
			return h, false, "", errNoFrontmatter
		}
		break
	}
	start := p
	h.firstLine = lineNo + 1
	for {
		line, next, term, ok := nextLine(data, p, atEOF)
		if !ok {
			if atEOF {
				return h, false, "", errUnclosed
			}
			return h, true, "", nil
		}
		lineNo++
		if string(trimBlanks(line)) == h.format.End {
			h.end = next
			h.endLine = lineNo
			note(term)
			break
		}
		note(term)
		p = next
	}
	raw := data[start:p]
	if bytes.IndexByte(raw, '\r') >= 0 {
		raw = bytes.ReplaceAll(raw, []byte("\r\n"), []byte("\n"))
		raw = bytes.ReplaceAll(raw, []byte("\r"), []byte("\n"))
	}
	// raw is not retained past the parse (the decoders copy what they
	// keep), so it need not be cloned out of the read buffer.
	h.yaml = raw
	return h, false, "", nil
}

var (
	yamlErrLine = regexp.MustCompile(`line (\d+):`)
	// A top-level or nested "key: value" line whose value is a plain
	// (unquoted, non-flow, non-block) scalar.
	plainKV = regexp.MustCompile(`^(\s*(?:- )?[A-Za-z0-9_][A-Za-z0-9_.-]*\s*):[ \t]+([^\s"'\[{|>&*!#%@` + "`" + `].*)$`)
)

// colonFix records a line whose value was quoted to be readable.
type colonFix struct {
	line int // 1-based line within the YAML block
	key  string
}

// decodeYAML decodes a frontmatter block into an ordered map with the
// format's decoder. When the YAML fails with "mapping values are not
// allowed" (an unquoted ": " inside a value, common in descriptions), the
// offending line's value is quoted and the decode retried, a few times;
// JSON-style surrogate pairs ("\uD83D\uDD2D", which PyYAML and js-yaml
// accept) are rewritten as the one escape YAML reads.
func decodeYAML(src []byte, f *frontmatter.Format) (yaml.MapSlice, []colonFix, error) {
	var fixes []colonFix
	for attempt := 0; ; attempt++ {
		var d lenientDecode
		err := f.Unmarshal(src, &d)
		if err == nil {
			for _, line := range d.colons {
				fixes = append(fixes, colonFix{line: line, key: lineKey(src, line)})
			}
			return d.m, fixes, nil
		}
		if attempt >= 16 {
			return nil, fixes, err
		}
		if strings.Contains(err.Error(), "invalid Unicode character escape code") {
			if fixed, ok := fixSurrogates(src); ok {
				src = fixed
				continue
			}
			return nil, fixes, err
		}
		if !strings.Contains(err.Error(), "mapping values are not allowed") {
			return nil, fixes, err
		}
		line := 1
		if mm := yamlErrLine.FindStringSubmatch(err.Error()); mm != nil {
			line, _ = strconv.Atoi(mm[1])
		}
		fixed, key, ok := quoteLine(src, line)
		if !ok {
			return nil, fixes, err
		}
		src = fixed
		fixes = append(fixes, colonFix{line: line, key: key})
	}
}

var (
	surrogatePair = regexp.MustCompile(`\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})`)
	loneSurrogate = regexp.MustCompile(`\\u[dD][89a-fA-F][0-9a-fA-F]{2}`)
)

// fixSurrogates rewrites "\uD83D\uDD2D" escapes as "\U0001F52D", and lone
// surrogates as U+FFFD, as JSON decoders do.
func fixSurrogates(src []byte) ([]byte, bool) {
	if !loneSurrogate.Match(src) {
		return nil, false
	}
	out := surrogatePair.ReplaceAllFunc(src, func(m []byte) []byte {
		hi, _ := strconv.ParseUint(string(m[2:6]), 16, 32)
		lo, _ := strconv.ParseUint(string(m[8:12]), 16, 32)
		r := 0x10000 + (hi-0xD800)<<10 + (lo - 0xDC00)
		return []byte(fmt.Sprintf("\\U%08X", r))
	})
	return loneSurrogate.ReplaceAll(out, []byte(`\uFFFD`)), true
}

// fieldError is an optional field dropped because its YAML cannot be read.
type fieldError struct {
	key  string
	line int // 1-based line within the YAML block
	msg  string
}

// decodeByField is the last resort for a block YAML cannot read whole: it
// is split into its top-level entries (a line at column 0 and the
// indented, blank or comment lines after it), each decoded alone, with the
// colon fix and the folding of a multi-line plain value. Entries that
// still cannot be read are returned as fieldErrors; the caller refuses the
// skill when name or description is among them.
func decodeByField(src []byte, f *frontmatter.Format) (yaml.MapSlice, []colonFix, []fieldError) {
	var out yaml.MapSlice
	var fixes []colonFix
	var bad []fieldError
	lines := strings.SplitAfter(string(src), "\n")
	for start := 0; start < len(lines); {
		end := start + 1
		for end < len(lines) && !topLevel(lines[end]) {
			end++
		}
		chunk := strings.Join(lines[start:end], "")
		first := start + 1
		start = end
		if strings.TrimSpace(chunk) == "" || strings.HasPrefix(chunk, "#") && !strings.Contains(chunk, ":") {
			continue
		}
		m, fx, err := decodeYAML([]byte(chunk), f)
		if err != nil {
			if folded, ok := foldPlain(chunk); ok {
				var m2 yaml.MapSlice
				if f.Unmarshal([]byte(folded), &m2) == nil {
					m, err = m2, nil
					fx = []colonFix{{line: 1, key: chunkKey(chunk)}}
				}
			}
		}
		if err != nil {
			msg := strings.TrimPrefix(err.Error(), "yaml: ")
			bad = append(bad, fieldError{key: chunkKey(chunk), line: first, msg: msg})
			continue
		}
		for _, c := range fx {
			fixes = append(fixes, colonFix{line: c.line + first - 1, key: c.key})
		}
		out = append(out, m...)
	}
	return out, fixes, bad
}

// topLevel reports a line that starts a top-level entry.
func topLevel(line string) bool {
	return line != "" && line[0] != ' ' && line[0] != '\t' && line[0] != '\n' && line[0] != '#'
}

// chunkKey is the key of a top-level entry, as written.
func chunkKey(chunk string) string {
	k, _, _ := strings.Cut(chunk, ":")
	return strings.Trim(strings.TrimSpace(k), `"'`)
}

// foldPlain rewrites "key: text" followed by indented continuation lines
// (a multi-line plain value) as one double-quoted line, folding the lines
// as YAML does (a line break is a space, a blank line a newline).
func foldPlain(chunk string) (string, bool) {
	lines := strings.Split(strings.TrimRight(chunk, "\n"), "\n")
	m := plainKV.FindStringSubmatch(lines[0])
	if m == nil || strings.HasPrefix(m[1], " ") {
		return "", false
	}
	var b strings.Builder
	b.WriteString(strings.TrimSpace(m[2]))
	pendingBreak := false
	for _, l := range lines[1:] {
		t := strings.TrimSpace(l)
		switch {
		case t == "":
			b.WriteByte('\n')
			pendingBreak = true
		case strings.HasPrefix(t, "#"):
			return "", false
		default:
			if !pendingBreak {
				b.WriteByte(' ')
			}
			pendingBreak = false
			b.WriteString(t)
		}
	}
	return m[1] + ": " + strconv.Quote(b.String()) + "\n", true
}

// quoteLine rewrites line n (1-based) of src, a "key: value" line, with the
// value double-quoted.
func quoteLine(src []byte, n int) ([]byte, string, bool) {
	lines := bytes.Split(src, []byte("\n"))
	if n < 1 || n > len(lines) {
		return nil, "", false
	}
	m := plainKV.FindSubmatch(lines[n-1])
	if m == nil {
		return nil, "", false
	}
	val := strings.TrimRight(string(m[2]), " \t")
	lines[n-1] = []byte(string(m[1]) + ": " + strconv.Quote(val))
	return bytes.Join(lines, []byte("\n")), strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(m[1])), "- ")), true
}

// lineKey returns the key of line n (1-based) of src, a "key: value" line.
func lineKey(src []byte, n int) string {
	for i := 1; i < n; i++ {
		j := bytes.IndexByte(src, '\n')
		if j < 0 {
			return ""
		}
		src = src[j+1:]
	}
	k, _, _ := bytes.Cut(src, []byte(":"))
	return strings.TrimSpace(string(k))
}

// keyLine returns the 1-based line within the YAML block of the top-level
// key, or 0.
func keyLine(src []byte, key string) int {
	n := 1
	for len(src) > 0 {
		i := bytes.IndexByte(src, '\n')
		line := src
		if i >= 0 {
			line = src[:i]
		}
		if bytes.HasPrefix(line, []byte(key)) {
			rest := bytes.TrimLeft(line[len(key):], " \t")
			if len(rest) > 0 && rest[0] == ':' {
				return n
			}
		} else if len(line) > 2 && (line[0] == '"' || line[0] == '\'') && bytes.HasPrefix(line[1:], []byte(key)) {
			return n
		}
		if i < 0 {
			break
		}
		src = src[i+1:]
		n++
	}
	return 0
}
