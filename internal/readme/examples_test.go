package readme

import (
	"strings"
	"testing"
)

// TestExamplesArePublic (issue 28): an example is code a user copies, so
// its program imports only public packages of this module (its tests may
// use internal helpers). examples/oauth imported internal/testkit/authserver.
func TestExamplesArePublic(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	lines := goList(t, "-f", `{{.ImportPath}}:{{join .Imports ","}}`, "./examples/...")
	if len(lines) < 5 {
		t.Fatalf("go list found %d example packages", len(lines))
	}
	for _, line := range lines {
		pkg, imps, _ := strings.Cut(line, ":")
		for _, imp := range strings.Split(imps, ",") {
			own, ok := strings.CutPrefix(imp, module)
			if ok && (strings.HasPrefix(own, "internal/") || strings.Contains(own, "/internal/")) {
				t.Errorf("%s imports %s: an example may import only public packages", pkg, imp)
			}
		}
	}
}
