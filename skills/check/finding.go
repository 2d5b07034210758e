package check

import (
	"fmt"
	"strconv"

	"github.com/switchboard-dev/switchboard/skills"
)

// Code identifies the kind of a Finding. Warnings of the loader keep their
// skills.Code (bom, name-mismatch, link-missing…); refusals and the
// checker's own checks have the codes below.
type Code string

// Refusals: the skill does not load (always errors).
const (
	CodeNoFrontmatter Code = "no-frontmatter" // skills.ErrNoFrontmatter
	CodeNotYAML       Code = "not-yaml"       // skills.ErrNotYAML
	CodeUnclosed      Code = "unclosed"       // skills.ErrUnclosed
	CodeBadYAML       Code = "bad-yaml"       // skills.ErrBadYAML
	CodeNoDescription Code = "no-description" // skills.ErrNoDescription
	CodeNoName        Code = "no-name"        // skills.ErrNoName
	CodeBinary        Code = "binary"         // skills.ErrBinary (in the frontmatter or, on activation, the body)
	CodeNotUTF8       Code = "not-utf8"       // skills.ErrNotUTF8 (idem)
	CodeTooLarge      Code = "too-large"      // skills.ErrTooLarge
	CodeUnreadable    Code = "unreadable"     // any other error reading a skill
)

// The checker's own checks.
const (
	CodeNoSkills            Code = "no-skills"                      // error: no SKILL.md under a directory
	CodeSymlinkOutside      Code = "symlink-outside"                // error: a symbolic link (or a linked SKILL.md) leaving the skill folder
	CodeSymlinkBroken       Code = "symlink-broken"                 // warning: a symbolic link to nothing
	CodeBodyLong            Code = "body-long"                      // warning: body over the recommended lines or tokens
	CodeUnmentioned         Code = "unmentioned-file"               // warning: a bundled file SKILL.md never mentions
	CodeScriptNotExecutable Code = "script-not-executable"          // warning: a script without the executable bit
	CodeScriptNoShebang     Code = "script-no-shebang"              // warning: a script without a #! line
	CodeDescriptionWhen     Code = "description-when"               // hint: the description does not say when to use the skill
	CodeCatalogCut          Code = "catalog-cut"                    // hint: the catalog does not fit its budget in full
	CodeAllowedToolSkipped  Code = Code(skills.WarnAllowedToolSkip) // hint: an allowed-tools entry that cannot be pre-approved here
)

// Severity says how much a finding matters.
type Severity string

// Severities. Errors fail a check; warnings fail a strict check; hints
// never fail.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
	SeverityHint    Severity = "hint"
)

// severity classifies a finding. Broken links are errors even though the
// loader loads the skill: the model would be sent to a file it cannot read.
func severity(c Code, spec, strict bool) Severity {
	switch c {
	case CodeNoFrontmatter, CodeNotYAML, CodeUnclosed, CodeBadYAML, CodeNoDescription, CodeNoName,
		CodeBinary, CodeNotUTF8, CodeTooLarge, CodeUnreadable, CodeNoSkills, CodeSymlinkOutside,
		Code(skills.WarnLinkMissing), Code(skills.WarnLinkCase), Code(skills.WarnLinkOutside):
		return SeverityError
	case CodeDescriptionWhen, CodeCatalogCut, CodeAllowedToolSkipped:
		return SeverityHint
	case Code(skills.WarnUnknownField):
		// Common and harmless here (other agents' own fields); a strict
		// agent refuses them.
		if strict {
			return SeverityError
		}
		return SeverityHint
	}
	if spec && strict {
		return SeverityError
	}
	return SeverityWarning
}

// Finding is one problem of a skill folder.
type Finding struct {
	// File is the file concerned, as reached from the directory given to
	// the check; Line is 1-based, or 0 when the finding is about the whole
	// file.
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
	// Severity and Code classify the finding.
	Severity Severity `json:"severity"`
	Code     Code     `json:"code"`
	// Spec is set when the finding is a deviation from the Agent Skills
	// specification.
	Spec bool `json:"spec,omitempty"`
	// Skill is the skill's name, when it loaded.
	Skill string `json:"skill,omitempty"`
	// Message describes the problem.
	Message string `json:"message"`
}

// String formats the finding in the style of go vet:
//
//	skills/pdf/SKILL.md:3: warning: description is 1204 characters; … [description-long, spec]
func (f Finding) String() string {
	loc := f.File
	if f.Line > 0 {
		loc += ":" + strconv.Itoa(f.Line)
	}
	tag := string(f.Code)
	if f.Spec {
		tag += ", spec"
	}
	return fmt.Sprintf("%s: %s: %s [%s]", loc, f.Severity, f.Message, tag)
}

// codeOf maps a refusal's reason to its code.
func codeOf(reason error) Code {
	switch reason {
	case skills.ErrNoFrontmatter:
		return CodeNoFrontmatter
	case skills.ErrNotYAML:
		return CodeNotYAML
	case skills.ErrUnclosed:
		return CodeUnclosed
	case skills.ErrBadYAML:
		return CodeBadYAML
	case skills.ErrNoDescription:
		return CodeNoDescription
	case skills.ErrNoName:
		return CodeNoName
	case skills.ErrBinary:
		return CodeBinary
	case skills.ErrNotUTF8:
		return CodeNotUTF8
	case skills.ErrTooLarge:
		return CodeTooLarge
	case skills.ErrOutside:
		return CodeSymlinkOutside
	}
	return CodeUnreadable
}
