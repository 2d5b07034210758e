// Package skilltest helps the tests of projects that ship skills, in the
// spirit of net/http/httptest: one line asserts that a skills folder loads
// without errors, and the skills can then be activated and their files
// read through the same tools the agent's model calls.
//
//	func TestSkills(t *testing.T) {
//		s := skilltest.RequireLoads(t, "skills")
//		text := s.Activate("pdf-forms")
//		if !strings.Contains(text, "references/forms.md") { … }
//		s.Read("pdf-forms", "references/forms.md")
//	}
//
// The checks are those of the skillcheck command (skills/cmd/skillcheck);
// see docs/skills.md.
package skilltest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/skills"
	"github.com/switchboard-dev/switchboard/skills/internal/check"
)

// Skills are skills loaded for a test, as an agent would load them.
type Skills struct {
	t      testing.TB
	report *check.Report
	tools  map[string]agent.Tool
}

// newSkills loads and checks the skills under dirs (skill folders or trees of
// them, in precedence order) without asserting anything about the
// findings; it fails t only when a directory cannot be read.
func newSkills(t testing.TB, dirs ...string) *Skills {
	t.Helper()
	return load(t, false, dirs)
}

// RequireLoads loads the skills under dirs and reports each error finding
// of a lenient check (a refused skill, a broken link, a symbolic link
// leaving a folder…) with t.Errorf, in the style of go vet; warnings and
// hints are logged. It returns the skills for further use.
func RequireLoads(t testing.TB, dirs ...string) *Skills {
	t.Helper()
	s := load(t, false, dirs)
	s.require()
	return s
}

// RequireStrict is RequireLoads with a strict check: every deviation from
// the Agent Skills specification, and every warning, fails t, as
// skillcheck -strict does. Skills that pass load in stricter agents too.
func RequireStrict(t testing.TB, dirs ...string) *Skills {
	t.Helper()
	s := load(t, true, dirs)
	s.require()
	return s
}

func load(t testing.TB, strict bool, dirs []string) *Skills {
	t.Helper()
	ctx := context.Background()
	r, err := check.Dirs(ctx, dirs, check.Options{Strict: strict})
	if err != nil {
		t.Fatalf("skilltest: %v", err)
		return nil
	}
	t.Cleanup(func() { r.Toolset().Close() })
	tools, err := r.Toolset().Tools(ctx)
	if err != nil {
		t.Fatalf("skilltest: %v", err)
		return nil
	}
	s := &Skills{t: t, report: r, tools: make(map[string]agent.Tool, len(tools))}
	for _, tool := range tools {
		s.tools[tool.Spec().Name] = tool
	}
	return s
}

// require reports the findings: failing ones with Errorf, others with Logf.
func (s *Skills) require() {
	s.t.Helper()
	for _, f := range s.report.Findings {
		if f.Severity == check.SeverityError || s.report.Strict && f.Severity == check.SeverityWarning {
			s.t.Errorf("%s", f)
		} else {
			s.t.Logf("%s", f)
		}
	}
}

// Names returns the names of the skills loaded, in precedence order.
func (s *Skills) Names() []string {
	names := make([]string, len(s.report.Skills))
	for i, sk := range s.report.Skills {
		names[i] = sk.Name
	}
	return names
}

// Findings returns every finding of the check (errors, warnings and
// hints) in the text form of skillcheck: "file:line: severity: message [code]".
func (s *Skills) Findings() []string {
	out := make([]string, len(s.report.Findings))
	for i, f := range s.report.Findings {
		out[i] = f.String()
	}
	return out
}

// Toolset returns the skills toolset, for an agent under test.
func (s *Skills) Toolset() *skills.Toolset { return s.report.Toolset() }

// Catalog returns the catalog the model receives in its system prompt.
func (s *Skills) Catalog() string { return s.Toolset().Instructions(context.Background()) }

// Call calls one of the toolset's tools (skills.ToolActivate,
// skills.ToolReadFile) with args marshalled to JSON, as the agent does for
// the model, and returns its result or error without failing the test.
func (s *Skills) Call(tool string, args any) (*agent.Result, error) {
	t, ok := s.tools[tool]
	if !ok {
		return nil, fmt.Errorf("skilltest: the skills toolset has no tool %q", tool)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("skilltest: arguments of %s: %w", tool, err)
	}
	return t.Call(context.Background(), raw)
}

// Activate calls activate_skill for the named skill and returns what the
// model receives: the base directory, the bundled files and the
// instructions. An error fails the test.
func (s *Skills) Activate(name string) string {
	s.t.Helper()
	return s.text(skills.ToolActivate, map[string]any{"name": name})
}

// Read calls read_skill_file for a file of the named skill (a path
// relative to its folder) and returns what the model receives: the text
// (or the first page of a large file, with a note of how to read on, or a
// binary file as base64). An error fails the test.
func (s *Skills) Read(name, path string) string {
	s.t.Helper()
	return s.text(skills.ToolReadFile, map[string]any{"skill": name, "path": path})
}

func (s *Skills) text(tool string, args map[string]any) string {
	s.t.Helper()
	res, err := s.Call(tool, args)
	if err != nil {
		s.t.Fatalf("%s %v: %v", tool, args, err)
		return ""
	}
	return res.Text()
}
