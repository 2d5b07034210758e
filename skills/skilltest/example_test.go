package skilltest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/skills/skilltest"
)

// printT stands in for the *testing.T of a real test: it prints what the
// helpers report. The helpers call only the methods it defines.
type printT struct{ testing.TB }

func (printT) Helper()                        {}
func (printT) Errorf(format string, a ...any) { fmt.Printf("FAIL: "+format+"\n", a...) }
func (printT) Fatalf(format string, a ...any) { panic(fmt.Sprintf(format, a...)) }
func (printT) Logf(string, ...any)            {}
func (printT) Cleanup(func())                 {}

// Example asserts that a skills folder loads cleanly (in a test: pass t),
// then activates a skill and reads one of its files through the tools the
// model calls.
func Example() {
	var t printT // in a test: func TestSkills(t *testing.T)
	s := skilltest.RequireStrict(t, "../../examples/skills/skills")

	text := s.Activate("commit-message")
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "- ") || strings.HasPrefix(line, "# ") {
			fmt.Println(line)
		}
	}
	ref := s.Read("commit-message", "references/conventional-commits.md")
	fmt.Println(strings.SplitN(ref, "\n", 2)[0])
	// Output:
	// - references/conventional-commits.md (389 bytes)
	// # Commit messages
	// - The subject would complete the sentence "If applied, this commit will …".
	// - One logical change per commit; suggest splitting otherwise.
	// # Conventional Commits types
}

// ExampleRequireLoads shows how a folder with broken links fails a test.
func ExampleRequireLoads() {
	var t printT // in a test: func TestSkills(t *testing.T)
	skilltest.RequireLoads(t, "../testdata/quirks/links")
	// Output:
	// FAIL: ../testdata/quirks/links/SKILL.md:7: error: link "references/Guide.md" differs in case from the bundled "references/guide.md"; it breaks on case-sensitive file systems [link-case]
	// FAIL: ../testdata/quirks/links/SKILL.md:7: error: link "references/nope.md" names a file the skill does not bundle [link-missing]
	// FAIL: ../testdata/quirks/links/SKILL.md:11: error: link "../clean/SKILL.md" leaves the skill folder [link-outside]
}
