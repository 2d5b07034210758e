package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/switchboard-dev/switchboard/skills/skilltest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRun runs the example on the embedded skills and on the same folder
// read from disk: the skills are clean in strict mode (no warning, links
// included), the catalog lists both, and the agent activates one and reads
// its reference.
func TestRun(t *testing.T) {
	for _, dir := range []string{"", "skills"} {
		t.Run("dir="+dir, func(t *testing.T) {
			var out bytes.Buffer
			if err := run(context.Background(), &out, dir, false); err != nil {
				t.Fatal(err)
			}
			got := out.String()
			for _, want := range []string{
				"loaded 2 skills, 0 warnings, 0 errors",
				"<skill><name>commit-message</name><description>Write a git commit message",
				"<skill><name>csv-report</name>",
				`<- activate_skill: Skill "commit-message" is active.`,
				"<- read_skill_file: # Conventional Commits types",
				"Done: (1 tool results, 0 errors)",
			} {
				if !strings.Contains(got, want) {
					t.Errorf("output lacks %q:\n%s", want, got)
				}
			}
		})
	}
}

// TestSkillsStrict: the example skills pass every check of skillcheck
// -strict, so they load in stricter agents too.
func TestSkillsStrict(t *testing.T) { skilltest.RequireStrict(t, "skills") }
