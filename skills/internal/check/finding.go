package check

import (
	"fmt"
	"strconv"

	"github.com/switchboard-dev/switchboard/skills"
)

// Code identifies the kind of a Finding. Its values are stable strings
// (the codes of skillcheck -json), compared as f.Code == "link-missing";
// docs/skills.md lists them all. Warnings of the loader and refusals keep
// their skills.Warning or Refusal code (bom, name-mismatch, link-missing, no-description,
// too-large…: see skills.Warning); the checker's own checks have these codes:
//
//	no-skills              error: no SKILL.md under a directory
//	symlink-outside        error: a symbolic link (or a linked SKILL.md) leaving the skill folder
//	symlink-broken         warning: a symbolic link to nothing
//	body-long              warning: body over the recommended lines or tokens
//	unmentioned-file       warning: a bundled file SKILL.md never mentions
//	script-not-executable  warning: a script without the executable bit
//	script-no-shebang      warning: a script without a #! line
//	description-when       hint: the description does not say when to use the skill
//	catalog-cut            hint: the catalog does not fit its budget in full
//	allowed-tool-skipped   hint: an allowed-tools entry that cannot be pre-approved here
//
// Refusals (the skill does not load) are always errors, and so are the
// loader's link-missing, link-case and link-outside warnings.
type Code string

// Refusals: the skill does not load (always errors); the loader's codes
// (skills.Refusal.Code).
const (
	codeNoFrontmatter Code = "no-frontmatter"
	codeNotYAML       Code = "not-yaml"
	codeUnclosed      Code = "unclosed"
	codeBadYAML       Code = "bad-yaml"
	codeNoDescription Code = "no-description"
	codeNoName        Code = "no-name"
	codeBinary        Code = "binary"   // in the frontmatter or, on activation, the body
	codeNotUTF8       Code = "not-utf8" // idem
	codeTooLarge      Code = "too-large"
	codeUnreadable    Code = "unreadable" // any other error reading a skill
)

// The checker's own checks.
const (
	codeNoSkills            Code = "no-skills"
	codeSymlinkOutside      Code = "symlink-outside"
	codeSymlinkBroken       Code = "symlink-broken"
	codeBodyLong            Code = "body-long"
	codeUnmentioned         Code = "unmentioned-file"
	codeScriptNotExecutable Code = "script-not-executable"
	codeScriptNoShebang     Code = "script-no-shebang"
	codeDescriptionWhen     Code = "description-when"
	codeCatalogCut          Code = "catalog-cut"
	codeAllowedToolSkipped  Code = "allowed-tool-skipped" // the loader's code for the same entries
)

// Loader warnings the checker classifies (skills.Warning codes).
const (
	codeLinkMissing  Code = "link-missing"
	codeLinkCase     Code = "link-case"
	codeLinkOutside  Code = "link-outside"
	codeUnknownField Code = "unknown-field"
	codeDiscovery    Code = "discovery"
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
	case codeNoFrontmatter, codeNotYAML, codeUnclosed, codeBadYAML, codeNoDescription, codeNoName,
		codeBinary, codeNotUTF8, codeTooLarge, codeUnreadable, codeNoSkills, codeSymlinkOutside,
		codeLinkMissing, codeLinkCase, codeLinkOutside:
		return SeverityError
	case codeDescriptionWhen, codeCatalogCut, codeAllowedToolSkipped:
		return SeverityHint
	case codeUnknownField:
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

// codeOf is a refusal's code: the loader's (skills.Refusal.Code).
func codeOf(r skills.Refusal) Code { return Code(r.Code) }
