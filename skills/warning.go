package skills

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/switchboard-dev/switchboard/agent/failure"
)

// Code identifies the kind of a Warning.
type Code string

// Warning codes. Codes marked "spec" are deviations from the Agent Skills
// specification: in strict mode they refuse the skill.
const (
	WarnBOM               Code = "bom"                  // a UTF-8 byte order mark
	WarnCRLF              Code = "crlf"                 // CRLF line endings
	WarnCR                Code = "cr"                   // CR-only line endings
	WarnLeadingBlank      Code = "leading-blank"        // spec: blank lines before the opening ---
	WarnYAMLDelimiter     Code = "yaml-delimiter"       // spec: opened with ---yaml
	WarnUnquotedColon     Code = "unquoted-colon"       // spec: a value with an unquoted ": "
	WarnDuplicateKey      Code = "duplicate-key"        // spec: a key given twice (the last wins)
	WarnNameMissing       Code = "name-missing"         // spec: no name (the folder's name is used)
	WarnNameInvalid       Code = "name-invalid"         // spec: not 1-64 lowercase letters, digits, single hyphens
	WarnNameMismatch      Code = "name-mismatch"        // spec: name differs from the folder
	WarnDescriptionLong   Code = "description-long"     // spec: description over 1,024 characters
	WarnMarkup            Code = "markup"               // description holds markup or control characters (escaped in the catalog)
	WarnCompatibilityLong Code = "compatibility-long"   // spec: compatibility over 500 characters
	WarnNotString         Code = "not-string"           // spec: a string field read as a boolean, number or other type
	WarnMetadataNested    Code = "metadata-nested"      // spec: a nested metadata map (flattened with dotted keys)
	WarnMetadataType      Code = "metadata-type"        // spec: metadata is not a map, or a value is not a string
	WarnAllowedToolsList  Code = "allowed-tools-list"   // spec: allowed-tools as a YAML list, or with commas
	WarnAllowedToolsType  Code = "allowed-tools-type"   // spec: allowed-tools neither string nor list (ignored)
	WarnAllowedToolSkip   Code = "allowed-tool-skipped" // an allowed-tools entry that cannot be granted safely
	WarnUnknownField      Code = "unknown-field"        // spec: a field the specification does not define (kept in Extra); strict mode only
	WarnShadowed          Code = "shadowed"             // a skill hidden by a higher-precedence one of the same name
	WarnLinkMissing       Code = "link-missing"         // a relative link to a file the skill does not bundle
	WarnLinkCase          Code = "link-case"            // a relative link whose case differs from the bundled file
	WarnLinkOutside       Code = "link-outside"         // a link that leaves the skill folder
	WarnDiscovery         Code = "discovery"            // discovery limits, unreadable folders, broken symlinks, roots holding no skill
	WarnSkillFileName     Code = "skill-file-name"      // spec: the main file is named skill.md, not SKILL.md
	WarnFieldDropped      Code = "field-dropped"        // spec: an optional field whose YAML cannot be read (dropped)
)

// specCodes are the warnings that deviate from the Agent Skills
// specification.
func isSpec(c Code) bool {
	switch c {
	case WarnLeadingBlank, WarnYAMLDelimiter, WarnUnquotedColon, WarnDuplicateKey, WarnNameMissing,
		WarnNameInvalid, WarnNameMismatch, WarnDescriptionLong, WarnCompatibilityLong, WarnNotString,
		WarnMetadataNested, WarnMetadataType, WarnAllowedToolsList, WarnAllowedToolsType, WarnUnknownField,
		WarnSkillFileName, WarnFieldDropped:
		return true
	}
	return false
}

// Warning is a problem that did not stop a skill from loading. It names the
// file and, when known, the line.
type Warning struct {
	// File is the SKILL.md (or other file) the warning is about.
	File string `json:"file"`
	// Line is the 1-based line in File, or 0 when it applies to the file.
	Line int `json:"line,omitempty"`
	// Code classifies the warning.
	Code Code `json:"code"`
	// Spec is set when the warning is a deviation from the Agent Skills
	// specification (strict mode refuses such skills).
	Spec bool `json:"spec,omitempty"`
	// Message describes the problem and what was done about it.
	Message string `json:"message"`
}

// String formats the warning as "file:line: message [code]".
func (w Warning) String() string {
	loc := w.File
	if w.Line > 0 {
		loc += ":" + strconv.Itoa(w.Line)
	}
	return fmt.Sprintf("%s: %s [%s]", loc, w.Message, w.Code)
}

func newWarning(file string, line int, code Code, format string, args ...any) Warning {
	return Warning{File: file, Line: line, Code: code, Spec: isSpec(code), Message: fmt.Sprintf(format, args...)}
}

// Reasons a SKILL.md is refused. Load errors wrap one of them in a
// *failure.Error (Kind Config, Source skills) whose message names the file.
var (
	// ErrNoFrontmatter: the file does not start with a --- line.
	ErrNoFrontmatter = errors.New("no YAML frontmatter (the file must start with a --- line)")
	// ErrNotYAML: the frontmatter is TOML or JSON; only YAML is accepted.
	ErrNotYAML = errors.New("frontmatter is not YAML")
	// ErrUnclosed: no closing --- line at column 0.
	ErrUnclosed = errors.New("frontmatter is not closed by a --- line at column 0")
	// ErrBadYAML: the frontmatter cannot be read as YAML, even leniently.
	ErrBadYAML = errors.New("frontmatter YAML cannot be read")
	// ErrNoDescription: the description is missing or empty.
	ErrNoDescription = errors.New("no description")
	// ErrNoName: no name and no folder name to fall back on.
	ErrNoName = errors.New("no name")
	// ErrBinary: the file contains a NUL byte.
	ErrBinary = errors.New("file contains a NUL byte")
	// ErrNotUTF8: the file is not valid UTF-8.
	ErrNotUTF8 = errors.New("file is not valid UTF-8")
	// ErrTooLarge: the file (or its frontmatter) is over the size cap.
	ErrTooLarge = errors.New("file is over the size cap")
	// ErrStrict: strict mode found deviations from the specification.
	ErrStrict = errors.New("deviates from the Agent Skills specification")
	// ErrOutside: a path leaves the skill folder.
	ErrOutside = errors.New("path leaves the skill folder")
)

// Refusal locates and explains why a SKILL.md (or its body) was refused,
// for tools that report refusals in their own format, such as skillcheck.
type Refusal struct {
	// File is the refused file; Line the 1-based line of the problem, or 0
	// when it applies to the whole file.
	File string
	Line int
	// Reason is one of the Err* sentinels, or the I/O error met.
	Reason error
	// Detail says more, or is empty.
	Detail string
}

// RefusalOf returns the refusal an error of this package carries: the
// errors listed by Toolset.Errors and Toolset.Check, and those returned by
// Parse and Toolset.Body. ok is false for other errors.
func RefusalOf(err error) (r Refusal, ok bool) {
	var re *refusalError
	if !errors.As(err, &re) {
		return Refusal{}, false
	}
	return re.r, true
}

// refusalError carries a Refusal inside a *failure.Error. The failure's
// message already states the location, the reason and the detail (it is
// what the model sees), so the carrier's own text says only what follows
// from them, and the reason is not stated twice in Error(); it unwraps to
// the reason for errors.Is.
type refusalError struct{ r Refusal }

func (e *refusalError) Error() string { return "the skill was refused" }
func (e *refusalError) Unwrap() error { return e.r.Reason }

// loadError returns the *failure.Error refusing file for reason.
func loadError(file string, line int, reason error, detail string) *failure.Error {
	loc := file
	if line > 0 {
		loc += ":" + strconv.Itoa(line)
	}
	msg := loc + ": " + reason.Error()
	if detail != "" {
		msg += ": " + detail
	}
	return &failure.Error{Kind: failure.Config, Source: failure.SourceSkill, Op: "load", Message: msg,
		Err: &refusalError{Refusal{File: file, Line: line, Reason: reason, Detail: detail}}}
}
