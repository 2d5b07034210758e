package readme

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/switchboard-dev/switchboard/"

// goList runs go list in the repository's root and returns its lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	return strings.Fields(string(out))
}

// TestImportRules: the dependency rules docs/architecture.md states hold.
// Each package may import only the listed packages of this module, and
// must not link the listed outside modules (directly or not).
func TestImportRules(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	rules := []struct {
		pkg       string
		mayImport []string // packages of this module (internal/ always allowed)
		notLinked []string // module path prefixes
	}{
		{"agent/failure", nil, []string{"github.com/nats-io", "github.com/tmc/langchaingo", "github.com/modelcontextprotocol", "github.com/a2aproject"}},
		{"llm", []string{"agent/failure"}, []string{"github.com/tmc/langchaingo", "github.com/nats-io"}},
		{"agent", []string{"agent/failure", "llm"}, []string{"github.com/tmc/langchaingo", "github.com/nats-io", "github.com/modelcontextprotocol", "github.com/a2aproject"}},
		{"agent/workflow", []string{"agent", "agent/failure", "llm"}, []string{"github.com/tmc/langchaingo", "github.com/nats-io"}},
		{"llm/provider", []string{"agent/failure", "llm"}, []string{"github.com/nats-io"}},
		{"skills", []string{"agent", "agent/failure", "llm"}, []string{"github.com/nats-io", "github.com/tmc/langchaingo"}},
		{"mcp", []string{"agent", "agent/failure", "llm"}, []string{"github.com/nats-io", "github.com/tmc/langchaingo"}},
		{"mcp/server", []string{"agent", "agent/failure", "llm", "mcp", "skills"}, []string{"github.com/nats-io", "github.com/tmc/langchaingo", "github.com/a2aproject"}},
		{"bus", []string{"agent", "agent/failure", "llm", "bus/task"}, []string{"github.com/tmc/langchaingo", "github.com/modelcontextprotocol"}},
		{"bus/task", nil, []string{"github.com/nats-io"}},
		{"a2a", []string{"agent", "agent/failure", "llm", "bus/task"}, []string{"github.com/nats-io/nats-server", "github.com/tmc/langchaingo"}},
	}
	for _, r := range rules {
		t.Run(r.pkg, func(t *testing.T) {
			for _, imp := range goList(t, "-f", `{{join .Imports "\n"}}`, "./"+r.pkg) {
				own, ok := strings.CutPrefix(imp, module)
				if !ok || strings.HasPrefix(own, "internal/") || strings.Contains(own, "/internal/") {
					continue
				}
				if !slices.Contains(r.mayImport, own) {
					t.Errorf("%s imports %s; it may import only %v (and internal/)", r.pkg, own, r.mayImport)
				}
			}
			for _, dep := range goList(t, "-deps", "./"+r.pkg) {
				for _, banned := range r.notLinked {
					if strings.HasPrefix(dep, banned) {
						t.Errorf("%s links %s", r.pkg, dep)
					}
				}
			}
		})
	}
	// No package imports a command or an example.
	for _, line := range goList(t, "-f", `{{.ImportPath}}:{{join .Imports ","}}`, "./...") {
		pkg, imps, _ := strings.Cut(line, ":")
		for _, imp := range strings.Split(imps, ",") {
			if strings.HasPrefix(imp, module+"cmd/") || strings.HasPrefix(imp, module+"examples/") {
				t.Errorf("%s imports %s", pkg, imp)
			}
		}
	}
}
