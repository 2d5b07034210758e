package check_test

import (
	"context"
	"fmt"

	"github.com/switchboard-dev/switchboard/skills/internal/check"
)

// Example checks a skill folder whose links are broken and prints the
// findings as skillcheck does.
func Example() {
	r, err := check.Dirs(context.Background(), []string{"../../testdata/quirks/links"}, check.Options{Strict: true})
	if err != nil {
		panic(err)
	}
	for _, f := range r.Findings {
		fmt.Println(f)
	}
	fmt.Println("failed:", r.Failed())
	// Output:
	// ../../testdata/quirks/links/SKILL.md:3: hint: the description does not say when to use the skill; the specification asks for what it does and when to use it ("Use when …") [description-when]
	// ../../testdata/quirks/links/SKILL.md:7: error: link "references/Guide.md" differs in case from the bundled "references/guide.md"; it breaks on case-sensitive file systems [link-case]
	// ../../testdata/quirks/links/SKILL.md:7: error: link "references/nope.md" names a file the skill does not bundle [link-missing]
	// ../../testdata/quirks/links/SKILL.md:11: error: link "../clean/SKILL.md" leaves the skill folder [link-outside]
	// failed: true
}
