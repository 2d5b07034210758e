package skills

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/switchboard-dev/switchboard/failure"
)

// skillCode is the type of the warning and refusal codes (Warning.Code,
// Refusal.Code), listed in the doc comment of Warning.
type skillCode string

// Warning codes (see skillCode).
const (
	warnBOM               skillCode = "bom"                  // a UTF-8 byte order mark
	warnCRLF              skillCode = "crlf"                 // CRLF line endings
	warnCR                skillCode = "cr"                   // CR-only line endings
	warnLeadingBlank      skillCode = "leading-blank"        // spec: blank lines before the opening ---
	warnYAMLDelimiter     skillCode = "yaml-delimiter"       // spec: opened with ---yaml
	warnUnquotedColon     skillCode = "unquoted-colon"       // spec: a value with an unquoted ": "
	warnDuplicateKey      skillCode = "duplicate-key"        // spec: a key given twice (the last wins)
	warnNameMissing       skillCode = "name-missing"         // spec: no name (the folder's name is used)
	warnNameInvalid       skillCode = "name-invalid"         // spec: not 1-64 lowercase letters, digits, single hyphens
	warnNameMismatch      skillCode = "name-mismatch"        // spec: name differs from the folder
	warnDescriptionLong   skillCode = "description-long"     // spec: description over 1,024 characters
	warnMarkup            skillCode = "markup"               // description holds markup or control characters (escaped in the catalog)
	warnCompatibilityLong skillCode = "compatibility-long"   // spec: compatibility over 500 characters
	warnNotString         skillCode = "not-string"           // spec: a string field read as a boolean, number or other type
	warnMetadataNested    skillCode = "metadata-nested"      // spec: a nested metadata map (flattened with dotted keys)
	warnMetadataType      skillCode = "metadata-type"        // spec: metadata is not a map, or a value is not a string
	warnAllowedToolsList  skillCode = "allowed-tools-list"   // spec: allowed-tools as a YAML list, or with commas
	warnAllowedToolsType  skillCode = "allowed-tools-type"   // spec: allowed-tools neither string nor list (ignored)
	warnAllowedToolSkip   skillCode = "allowed-tool-skipped" // an allowed-tools entry that cannot be granted safely
	warnUnknownField      skillCode = "unknown-field"        // spec: a field the specification does not define (kept in Extra); strict mode only
	warnShadowed          skillCode = "shadowed"             // a skill hidden by a higher-precedence one of the same name
	warnLinkMissing       skillCode = "link-missing"         // a relative link to a file the skill does not bundle
	warnLinkCase          skillCode = "link-case"            // a relative link whose case differs from the bundled file
	warnLinkOutside       skillCode = "link-outside"         // a link that leaves the skill folder
	warnDiscovery         skillCode = "discovery"            // discovery limits, unreadable folders, broken symlinks, roots holding no skill
	warnSkillFileName     skillCode = "skill-file-name"      // spec: the main file is named skill.md, not SKILL.md
	warnFieldDropped      skillCode = "field-dropped"        // spec: an optional field whose YAML cannot be read (dropped)
	warnGuardUnknown      skillCode = "guard-unknown"        // metadata switchboard.guards names a guard not in Config.Guards (strict mode refuses)
)

// specCodes are the warnings that deviate from the Agent Skills
// specification.
func isSpec(c skillCode) bool {
	switch c {
	case warnLeadingBlank, warnYAMLDelimiter, warnUnquotedColon, warnDuplicateKey, warnNameMissing,
		warnNameInvalid, warnNameMismatch, warnDescriptionLong, warnCompatibilityLong, warnNotString,
		warnMetadataNested, warnMetadataType, warnAllowedToolsList, warnAllowedToolsType, warnUnknownField,
		warnSkillFileName, warnFieldDropped:
		return true
	}
	return false
}

// Warning is a problem that did not stop a skill from loading. It names the
// file and, when known, the line.
//
// Warning.Code and Refusal.Code identify the kind of a Warning or of a
// Refusal. Their values are stable strings (they are also the codes of skillcheck -json), compared as
// w.Code == "name-mismatch"; docs/skills.md lists them all.
//
// Warning codes; those marked "spec" are deviations from the Agent Skills
// specification, which strict mode refuses (Warning.Spec is set):
//
//	bom                   a UTF-8 byte order mark
//	crlf, cr              CRLF or CR-only line endings
//	leading-blank         spec: blank lines before the opening ---
//	yaml-delimiter        spec: opened with ---yaml
//	unquoted-colon        spec: a value with an unquoted ": "
//	duplicate-key         spec: a key given twice (the last wins)
//	name-missing          spec: no name (the folder's name is used)
//	name-invalid          spec: not 1-64 lowercase letters, digits, single hyphens
//	name-mismatch         spec: name differs from the folder
//	description-long      spec: description over 1,024 characters
//	markup                description holds markup or control characters (escaped in the catalog)
//	compatibility-long    spec: compatibility over 500 characters
//	not-string            spec: a string field read as a boolean, number or other type
//	metadata-nested       spec: a nested metadata map (flattened with dotted keys)
//	metadata-type         spec: metadata is not a map, or a value is not a string
//	allowed-tools-list    spec: allowed-tools as a YAML list, or with commas
//	allowed-tools-type    spec: allowed-tools neither string nor list (ignored)
//	allowed-tool-skipped  an allowed-tools entry that cannot be granted safely
//	unknown-field         spec: a field the specification does not define (kept in Extra); Config.Strict and Config.Lint only
//	shadowed              a skill hidden by a higher-precedence one of the same name
//	link-missing          a relative link to a file the skill does not bundle
//	link-case             a relative link whose case differs from the bundled file
//	link-outside          a link that leaves the skill folder
//	discovery             discovery limits, unreadable folders, broken symlinks, roots holding no skill
//	skill-file-name       spec: the main file is named skill.md, not SKILL.md
//	field-dropped         spec: an optional field whose YAML cannot be read (dropped)
//	guard-unknown         metadata switchboard.guards names a guard not in Config.Guards (Config.Strict refuses)
//
// Refusal codes (the skill, or its body, does not load):
//
//	no-frontmatter   the file does not start with a --- line
//	not-yaml         the frontmatter is TOML or JSON; only YAML is accepted
//	unclosed         no closing --- line at column 0
//	bad-yaml         the frontmatter cannot be read as YAML, even leniently
//	no-description   the description is missing or empty
//	no-name          no name and no folder name to fall back on
//	binary           the file contains a NUL byte
//	not-utf8         the file is not valid UTF-8
//	too-large        the file (or its frontmatter) is over the size cap
//	strict           Config.Strict found deviations from the specification
//	symlink-outside  a symbolic link (or a path) leaves the skill folder or the roots
//	unreadable       any other error reading the skill (Refusal.Reason says which)
type Warning struct {
	// File is the SKILL.md (or other file) the warning is about.
	File string `json:"file"`
	// Line is the 1-based line in File, or 0 when it applies to the file.
	Line int `json:"line,omitempty"`
	// Code classifies the warning.
	Code string `json:"code"`
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

func newWarning(file string, line int, code skillCode, format string, args ...any) Warning {
	return Warning{File: file, Line: line, Code: string(code), Spec: isSpec(code), Message: fmt.Sprintf(format, args...)}
}

// Reasons a SKILL.md is refused. Load errors wrap one of them in a
// *failure.Error (Kind Config, Source skills) whose message names the file;
// users read them through RefusalOf, whose Code names the reason.
var (
	// errNoFrontmatter: the file does not start with a --- line.
	errNoFrontmatter = errors.New("no YAML frontmatter (the file must start with a --- line)")
	// errNotYAML: the frontmatter is TOML or JSON; only YAML is accepted.
	errNotYAML = errors.New("frontmatter is not YAML")
	// errUnclosed: no closing --- line at column 0.
	errUnclosed = errors.New("frontmatter is not closed by a --- line at column 0")
	// errBadYAML: the frontmatter cannot be read as YAML, even leniently.
	errBadYAML = errors.New("frontmatter YAML cannot be read")
	// errNoDescription: the description is missing or empty.
	errNoDescription = errors.New("no description")
	// errNoName: no name and no folder name to fall back on.
	errNoName = errors.New("no name")
	// errBinary: the file contains a NUL byte.
	errBinary = errors.New("file contains a NUL byte")
	// errNotUTF8: the file is not valid UTF-8.
	errNotUTF8 = errors.New("file is not valid UTF-8")
	// errTooLarge: the file (or its frontmatter) is over the size cap.
	errTooLarge = errors.New("file is over the size cap")
	// errStrict: strict mode found deviations from the specification.
	errStrict = errors.New("deviates from the Agent Skills specification")
	// errOutside: a path leaves the skill folder.
	errOutside = errors.New("path leaves the skill folder")
)

// Refusal locates and explains why a SKILL.md (or its body) was refused,
// for tools that report refusals in their own format, such as check.
type Refusal struct {
	// File is the refused file; Line the 1-based line of the problem, or 0
	// when it applies to the whole file.
	File string
	Line int
	// Code classifies the refusal: one of the refusal codes listed at
	// Warning ("no-description", "too-large", …).
	Code string
	// Reason is the error met: its text says what Code says, or it is the
	// I/O error when Code is "unreadable".
	Reason error
	// Detail says more, or is empty.
	Detail string
}

// RefusalOf returns the refusal an error of this package carries: the
// errors listed by Toolset.Errors and Toolset.Check, and those returned by
// Toolset.Body and Toolset.Activate. ok is false for other errors.
func RefusalOf(err error) (r Refusal, ok bool) {
	var re *refusalError
	if !errors.As(err, &re) {
		return Refusal{}, false
	}
	r = re.r
	r.Code = string(refusalCode(r.Reason))
	return r, true
}

// refusalCode names a refusal's reason (see skillCode); any error other than
// the sentinels themselves is "unreadable".
func refusalCode(reason error) skillCode {
	switch reason {
	case errNoFrontmatter:
		return "no-frontmatter"
	case errNotYAML:
		return "not-yaml"
	case errUnclosed:
		return "unclosed"
	case errBadYAML:
		return "bad-yaml"
	case errNoDescription:
		return "no-description"
	case errNoName:
		return "no-name"
	case errBinary:
		return "binary"
	case errNotUTF8:
		return "not-utf8"
	case errTooLarge:
		return "too-large"
	case errStrict:
		return "strict"
	case errOutside:
		return "symlink-outside"
	}
	return "unreadable"
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
