package check

import (
	"cmp"
	"slices"

	"github.com/switchboard-dev/switchboard/skills"
)

// Report is the outcome of a check.
type Report struct {
	// Dirs are the directories checked, as given.
	Dirs []string `json:"dirs"`
	// Strict is set for a strict check.
	Strict bool `json:"strict"`
	// Skills are the skills that loaded, in catalog order.
	Skills []Skill `json:"skills"`
	// Findings are sorted by file, line and code.
	Findings []Finding `json:"findings"`
	// Errors, Warnings and Hints count the findings by severity.
	Errors   int `json:"errors"`
	Warnings int `json:"warnings"`
	Hints    int `json:"hints"`

	ts *skills.Toolset
}

// Skill summarises a skill that loaded.
type Skill struct {
	// Name is the skill's name; File its SKILL.md, as reached from the
	// directory given.
	Name string `json:"name"`
	File string `json:"file"`
	// BodyLines and BodyTokens measure the instructions (tokens are
	// estimated as characters / 4, rounded up).
	BodyLines  int `json:"body_lines"`
	BodyTokens int `json:"body_tokens"`
	// Files counts the bundled files (what activation lists).
	Files int `json:"files"`
}

// Failed reports whether the check failed: any error, or any warning in a
// strict check. Hints never fail it.
func (r *Report) Failed() bool { return r.Errors > 0 || r.Strict && r.Warnings > 0 }

// Toolset returns the toolset the check loaded, configured as an agent's
// would be (with Options.CatalogBudget): its Instructions are the catalog
// the model receives, and its tools are the ones the model calls.
func (r *Report) Toolset() *skills.Toolset { return r.ts }

// add records a finding, classifying it.
func (r *Report) add(f Finding) {
	f.Severity = severity(f.Code, f.Spec, r.Strict)
	r.Findings = append(r.Findings, f)
}

// finish sorts the findings and counts them.
func (r *Report) finish() {
	slices.SortStableFunc(r.Findings, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Code, b.Code))
	})
	r.Findings = slices.Compact(r.Findings)
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	if r.Skills == nil {
		r.Skills = []Skill{}
	}
	r.Errors, r.Warnings, r.Hints = 0, 0, 0
	for _, f := range r.Findings {
		switch f.Severity {
		case SeverityError:
			r.Errors++
		case SeverityWarning:
			r.Warnings++
		default:
			r.Hints++
		}
	}
}
