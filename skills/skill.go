package skills

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/skills/internal/catalog"
	"gopkg.in/yaml.v2"
)

// Specification limits.
const (
	maxNameLen          = 64
	maxDescriptionLen   = 1024
	maxCompatibilityLen = 500
)

// Skill is a skill's metadata, read from the frontmatter of its SKILL.md.
type Skill struct {
	// Name is the skill's name: the frontmatter's, or the folder's when the
	// frontmatter has none; for a skill of a Claude Code plugin (a folder
	// holding .claude-plugin/plugin.json), "plugin:name".
	Name string `json:"name"`
	// Description says what the skill does and when to use it.
	Description string `json:"description"`
	// License, Compatibility: the specification's optional fields.
	License       string `json:"license,omitempty"`
	Compatibility string `json:"compatibility,omitempty"`
	// Metadata is the string map of the specification; nested maps are
	// flattened with dotted keys and other values rendered as text.
	Metadata map[string]string `json:"metadata,omitempty"`
	// AllowedTools are the allowed-tools entries as written (a string split
	// at blanks and commas, or a YAML list).
	AllowedTools []string `json:"allowed_tools,omitempty"`
	// Extra holds every field the specification does not define, decoded
	// (maps have string keys).
	Extra map[string]any `json:"extra,omitempty"`

	// Folder is the name of the skill's folder.
	Folder string `json:"folder"`
	// Dir is the skill's folder: an absolute OS path, or a path in Root's
	// fs.FS.
	Dir string `json:"dir"`
	// File names the SKILL.md (or skill.md) in warnings and errors.
	File string `json:"file"`
	// Root is the label of the root the skill was found in.
	Root string `json:"root,omitempty"`
	// Warnings are the problems found while loading the metadata.
	Warnings []Warning `json:"warnings,omitempty"`

	rootIdx int
	modTime time.Time
	size    int64
	// fileName is the main file's name in Dir (SKILL.md or skill.md);
	// linkRoot and linkRel, when linkRoot is set, locate a SKILL.md linked
	// into another root (see skillLoc). realDir is Dir without symbolic
	// links, as found at load.
	fileName          string
	linkRoot, linkRel string
	realDir           string
}

// parseOptions configures parse.
type parseOptions struct {
	// Folder is the name of the skill's folder; the name must match it.
	// Empty means unknown (no name check, no fallback).
	Folder string
	// Strict refuses any deviation from the specification.
	Strict bool
	// Lint reports every deviation from the specification as a warning,
	// including those only strict mode reports (unknown fields), but
	// refuses nothing beyond what lenient mode refuses: what a linter such
	// as skillcheck needs. Strict takes precedence.
	Lint bool
	// Guards are the guard names a skill may declare (Config.Guards).
	Guards map[string]agent.Guard
}

// parse parses the metadata of a SKILL.md from data, the whole file or its
// first bytes through the closing delimiter. file names the file in
// warnings and errors. It returns the refusal as a *failure.Error wrapping
// one of the Err* reasons.
func parse(file string, data []byte, opts parseOptions) (*Skill, error) {
	s, _, err := parseHeader(file, data, true, opts)
	return s, err
}

// parseHeader parses the frontmatter at the start of data; need is true when
// more data is needed (atEOF false).
func parseHeader(file string, data []byte, atEOF bool, opts parseOptions) (*Skill, bool, error) {
	h, need, notYAML, err := scanHeader(data, atEOF)
	if need {
		return nil, true, nil
	}
	if err != nil {
		switch err {
		case errNotYAML:
			return nil, false, loadError(file, 1, errNotYAML, notYAML+" frontmatter is not accepted; write it as YAML between --- lines")
		case errUnclosed:
			if b := firstBad(data); b != nil {
				return nil, false, b(file)
			}
		}
		return nil, false, loadError(file, 0, err, "")
	}
	if b := firstBad(data[:h.end]); b != nil {
		return nil, false, b(file)
	}
	s := &Skill{File: file, Folder: opts.Folder}
	warn := func(line int, code skillCode, format string, args ...any) {
		s.Warnings = append(s.Warnings, newWarning(file, line, code, format, args...))
	}
	if h.bom {
		warn(1, warnBOM, "a UTF-8 byte order mark starts the file; it was ignored")
	}
	if h.crlf {
		warn(1, warnCRLF, "CRLF line endings; read as LF")
	}
	if h.cr {
		warn(1, warnCR, "CR-only line endings; read as LF")
	}
	if h.leadingBlank > 0 {
		warn(1, warnLeadingBlank, "%d blank line(s) before the opening ---; they were skipped", h.leadingBlank)
	}
	if h.format.Start != "---" {
		warn(h.firstLine-1, warnYAMLDelimiter, "the frontmatter opens with %q; the specification uses ---", h.format.Start)
	}
	m, fixes, err := decodeYAML(h.yaml, h.format)
	if err != nil {
		// Read what can be read, field by field: only a name or a
		// description that cannot be had refuses the skill.
		var bad []fieldError
		m, fixes, bad = decodeByField(h.yaml, h.format)
		for _, b := range bad {
			line := b.line
			if mm := yamlErrLine.FindStringSubmatch(b.msg); mm != nil {
				n, _ := strconv.Atoi(mm[1])
				line = n + b.line - 1
			}
			line += h.firstLine - 1
			detail := yamlErrLine.ReplaceAllString(b.msg, "")
			detail = strings.TrimSpace(detail)
			if b.key == "name" || b.key == "description" {
				return nil, false, loadError(file, line, errBadYAML, detail)
			}
			warn(line, warnFieldDropped, "the YAML of %q cannot be read (%s); the field was dropped", b.key, detail)
		}
	}
	for _, f := range fixes {
		warn(f.line+h.firstLine-1, warnUnquotedColon, "the value of %q holds an unquoted \": \"; it was read as a quoted string (quote it)", f.key)
	}
	lineOf := func(key string) int {
		if n := keyLine(h.yaml, key); n > 0 {
			return n + h.firstLine - 1
		}
		return h.firstLine
	}
	if err := s.fill(m, lineOf, warn); err != nil {
		return nil, false, err
	}
	if opts.Strict || opts.Lint {
		// Unknown fields are common and harmless (Claude Code's own
		// fields, for example), so only strict (and lint) mode reports
		// them.
		keys := make([]string, 0, len(s.Extra))
		for k := range s.Extra {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			warn(lineOf(k), warnUnknownField, "the field %q is not in the specification; it was kept in Extra", k)
		}
	}
	for _, g := range s.Guards() {
		if _, ok := opts.Guards[g]; !ok {
			warn(lineOf("metadata"), warnGuardUnknown, "metadata %s names the guard %q, which this agent does not know (skills.Config.Guards); it is not applied", MetadataGuards, g)
		}
	}
	if opts.Strict {
		var devs []string
		for _, w := range s.Warnings {
			if w.Spec || w.Code == string(warnGuardUnknown) {
				devs = append(devs, w.String())
			}
		}
		if len(devs) > 0 {
			return s, false, loadError(file, 0, errStrict, strings.Join(devs, "; "))
		}
	}
	return s, false, nil
}

// firstBad checks data for NUL bytes and invalid UTF-8.
func firstBad(data []byte) func(file string) error {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		line := 1 + bytes.Count(data[:i], []byte("\n"))
		return func(file string) error { return loadError(file, line, errBinary, "") }
	}
	if !utf8.Valid(data) {
		i := 0
		for i < len(data) {
			r, n := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		line := 1 + bytes.Count(data[:i], []byte("\n"))
		return func(file string) error {
			return loadError(file, line, errNotUTF8, fmt.Sprintf("invalid byte at offset %d", i))
		}
	}
	return nil
}

// fill sets the skill's fields from the decoded frontmatter.
func (s *Skill) fill(m yaml.MapSlice, lineOf func(string) int, warn func(int, skillCode, string, ...any)) error {
	var name, desc any
	var hasName, hasDesc bool
	for i, item := range m {
		key, ok := item.Key.(string)
		if !ok {
			key = fmt.Sprint(item.Key)
		}
		for _, prev := range m[:i] {
			if prev.Key == item.Key {
				warn(lineOf(key), warnDuplicateKey, "the key %q is given more than once; the last value is used", key)
				break
			}
		}
		v := item.Value
		switch key {
		case "name":
			name, hasName = v, true
		case "description":
			desc, hasDesc = v, true
		case "license":
			s.License = s.stringField(key, v, lineOf, warn)
		case "compatibility":
			s.Compatibility = s.stringField(key, v, lineOf, warn)
			if n := utf8.RuneCountInString(s.Compatibility); n > maxCompatibilityLen {
				warn(lineOf(key), warnCompatibilityLong, "compatibility is %d characters; the specification allows %d", n, maxCompatibilityLen)
			}
		case "metadata":
			s.Metadata = metadataField(v, func(code skillCode, format string, args ...any) { warn(lineOf(key), code, format, args...) })
		case "allowed-tools":
			s.AllowedTools = allowedToolsField(v, func(code skillCode, format string, args ...any) { warn(lineOf(key), code, format, args...) })
		default:
			if s.Extra == nil {
				s.Extra = map[string]any{}
			}
			s.Extra[key] = plain(v)
		}
	}
	if hasDesc {
		s.Description = strings.TrimSpace(s.stringField("description", desc, lineOf, warn))
	}
	if s.Description == "" {
		return loadError(s.File, lineOf("description"), errNoDescription, "add a description saying what the skill does and when to use it")
	}
	if n := utf8.RuneCountInString(s.Description); n > maxDescriptionLen {
		warn(lineOf("description"), warnDescriptionLong, "description is %d characters; the specification allows %d (it is shortened in the catalog if needed)", n, maxDescriptionLen)
	}
	if strings.ContainsAny(s.Description, "<>&") || hasUnsafe(s.Description) {
		warn(lineOf("description"), warnMarkup, "description holds markup or control characters; they are escaped or removed in the catalog")
	}
	if hasName {
		s.Name = strings.TrimSpace(s.stringField("name", name, lineOf, warn))
	}
	if s.Name == "" {
		if s.Folder == "" {
			return loadError(s.File, lineOf("name"), errNoName, "add a name")
		}
		s.Name = s.Folder
		warn(lineOf("name"), warnNameMissing, "no name; the folder's name %q is used", s.Folder)
	} else {
		if msg := checkName(s.Name); msg != "" {
			warn(lineOf("name"), warnNameInvalid, "name %q %s", s.Name, msg)
		}
		if s.Folder != "" && s.Name != s.Folder {
			warn(lineOf("name"), warnNameMismatch, "name %q differs from its folder %q; the skill is known as %q", s.Name, s.Folder, s.Name)
		}
	}
	if hasUnsafe(s.Name) {
		return loadError(s.File, lineOf("name"), errNoName, "the name holds control characters")
	}
	return nil
}

// checkName returns why name breaks the specification, or "".
func checkName(name string) string {
	switch {
	case len(name) > maxNameLen:
		return fmt.Sprintf("is %d characters; the specification allows 1-%d", len(name), maxNameLen)
	case strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-"):
		return "starts or ends with a hyphen"
	case strings.Contains(name, "--"):
		return "holds a double hyphen"
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return "holds characters other than lowercase letters, digits and hyphens"
		}
	}
	return ""
}

// stringField renders a scalar field as a string, warning when YAML read it
// as something else (yes/no/on/off are booleans in YAML 1.1).
func (s *Skill) stringField(key string, v any, lineOf func(string) int, warn func(int, skillCode, string, ...any)) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	case bool, int, int64, uint64, float64:
		str := fmt.Sprint(x)
		warn(lineOf(key), warnNotString, "%s was read as a %T (%s); it is used as the string %q (quote it)", key, x, str, str)
		return str
	default:
		warn(lineOf(key), warnNotString, "%s is a %s, not a string; it was ignored", key, yamlType(x))
		return ""
	}
}

func yamlType(v any) string {
	switch v.(type) {
	case yaml.MapSlice, map[any]any:
		return "map"
	case []any:
		return "list"
	}
	return fmt.Sprintf("%T", v)
}

// metadataField converts metadata to a string map, flattening nested maps.
func metadataField(v any, warn func(skillCode, string, ...any)) map[string]string {
	ms, ok := v.(yaml.MapSlice)
	if !ok {
		if v != nil {
			warn(warnMetadataType, "metadata is a %s, not a map; it was ignored", yamlType(v))
		}
		return nil
	}
	out := make(map[string]string, len(ms))
	var nested, typed []string
	var walk func(prefix string, ms yaml.MapSlice)
	walk = func(prefix string, ms yaml.MapSlice) {
		for _, it := range ms {
			k := prefix + fmt.Sprint(it.Key)
			switch x := it.Value.(type) {
			case string:
				out[k] = x
			case yaml.MapSlice:
				nested = append(nested, k)
				walk(k+".", x)
			case nil:
				out[k] = ""
			case []any:
				typed = append(typed, k)
				parts := make([]string, len(x))
				for i, e := range x {
					parts[i] = fmt.Sprint(plain(e))
				}
				out[k] = strings.Join(parts, ", ")
			default:
				typed = append(typed, k)
				out[k] = fmt.Sprint(x)
			}
		}
	}
	walk("", ms)
	if len(nested) > 0 {
		warn(warnMetadataNested, "metadata nests maps under %s; they were flattened to dotted keys", strings.Join(nested, ", "))
	}
	if len(typed) > 0 {
		sort.Strings(typed)
		warn(warnMetadataType, "metadata values of %s are not strings; they were rendered as text", strings.Join(typed, ", "))
	}
	return out
}

// allowedToolsField reads allowed-tools: a space-delimited string (the
// specification), or a YAML list, or a comma-separated string (both common).
func allowedToolsField(v any, warn func(skillCode, string, ...any)) []string {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		entries, commas := splitTools(x)
		if commas {
			warn(warnAllowedToolsList, "allowed-tools is comma-separated; the specification separates entries with spaces")
		}
		return entries
	case []any:
		warn(warnAllowedToolsList, "allowed-tools is a YAML list; the specification uses a space-delimited string")
		var out []string
		for _, e := range x {
			str, ok := e.(string)
			if !ok {
				warn(warnAllowedToolsType, "allowed-tools entry %v is not a string; it was ignored", plain(e))
				continue
			}
			entries, _ := splitTools(str)
			out = append(out, entries...)
		}
		return out
	default:
		warn(warnAllowedToolsType, "allowed-tools is a %s; it was ignored", yamlType(v))
		return nil
	}
}

// splitTools splits an allowed-tools string at blanks and commas outside
// parentheses ("Bash(git add:*) Read, Grep").
func splitTools(s string) (entries []string, commas bool) {
	depth := 0
	start := -1
	flush := func(i int) {
		if start >= 0 {
			entries = append(entries, s[start:i])
			start = -1
		}
	}
	for i, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')':
			if depth > 0 {
				depth--
			}
		case depth == 0 && (r == ',' || unicode.IsSpace(r)):
			if r == ',' {
				commas = true
			}
			flush(i)
			continue
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(s))
	return entries, commas
}

// plain converts decoded YAML to JSON-compatible values.
func plain(v any) any {
	switch x := v.(type) {
	case yaml.MapSlice:
		m := make(map[string]any, len(x))
		for _, it := range x {
			m[fmt.Sprint(it.Key)] = plain(it.Value)
		}
		return m
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = plain(e)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e)
		}
		return out
	}
	return v
}

// hasUnsafe reports whether s holds a character isUnsafeRune reports,
// checking printable ASCII text (the common case) without decoding runes.
func hasUnsafe(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' && c != '\n' && c != '\t' || c >= 0x7f {
			return strings.IndexFunc(s[i:], isUnsafeRune) >= 0
		}
	}
	return false
}

// isUnsafeRune reports characters removed from catalog text (see
// catalog.IsUnsafe).
func isUnsafeRune(r rune) bool { return catalog.IsUnsafe(r) }
