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
		mayImport []string // public packages of this module (internal ones are checked below)
		notLinked []string // module path prefixes
	}{
		{"failure", nil, []string{"github.com/nats-io", "github.com/tmc/langchaingo", "github.com/modelcontextprotocol", "github.com/a2aproject"}},
		{"llm", []string{"failure"}, []string{"github.com/tmc/langchaingo", "github.com/nats-io"}},
		{"agent", []string{"failure", "llm"}, []string{"github.com/tmc/langchaingo", "github.com/nats-io", "github.com/modelcontextprotocol", "github.com/a2aproject"}},
		{"agent/workflow", []string{"agent", "failure", "llm"}, []string{"github.com/tmc/langchaingo", "github.com/nats-io"}},
		// Evaluations run in any program's tests: no NATS, MCP or A2A
		// linked. A cassette of a past run is built from the events the bus
		// replays (bus.Bus.Replay), handed in as an iterator.
		{"agent/eval", []string{"agent", "failure", "llm"}, []string{"github.com/tmc/langchaingo", "github.com/nats-io", "github.com/modelcontextprotocol", "github.com/a2aproject"}},
		{"agent/eval/evaltest", []string{"agent/eval"}, []string{"github.com/tmc/langchaingo", "github.com/nats-io", "github.com/modelcontextprotocol", "github.com/a2aproject"}},
		{"agent/eval/safety", []string{"agent", "agent/eval", "llm", "skills"}, []string{"github.com/tmc/langchaingo", "github.com/nats-io", "github.com/modelcontextprotocol", "github.com/a2aproject"}},
		// AG-UI over HTTP for any Runner: links no NATS, MCP or A2A SDK.
		{"agent/agui", []string{"agent", "failure", "llm"}, []string{"github.com/tmc/langchaingo", "github.com/nats-io", "github.com/modelcontextprotocol", "github.com/a2aproject"}},
		{"agent/guard", []string{"agent", "failure", "llm"}, []string{"github.com/tmc/langchaingo", "github.com/nats-io", "github.com/modelcontextprotocol", "github.com/a2aproject"}},
		// Each provider links only its own dependencies: a program that uses
		// one provider does not link another's.
		{"llm/provider", []string{"failure", "llm"}, []string{"github.com/nats-io", "github.com/tmc/langchaingo", "github.com/aws"}},
		{"llm/provider/openai", []string{"failure", "llm", "llm/provider"}, []string{"github.com/nats-io", "github.com/aws"}},
		{"llm/provider/anthropic", []string{"failure", "llm", "llm/provider"}, []string{"github.com/nats-io", "github.com/tmc/langchaingo", "github.com/aws"}},
		// Gemini's REST API spoken directly: no Google SDK (google.golang.org/genai
		// and its gRPC and protobuf dependencies make a small program several
		// times larger).
		{"llm/provider/gemini", []string{"failure", "llm", "llm/provider"}, []string{"github.com/nats-io", "github.com/tmc/langchaingo", "github.com/aws", "google.golang.org/genai", "cloud.google.com/go", "github.com/google/generative-ai-go"}},
		{"llm/provider/ollama", []string{"failure", "llm", "llm/provider"}, []string{"github.com/nats-io", "github.com/tmc/langchaingo", "github.com/aws"}},
		{"llm/provider/bedrock", []string{"failure", "llm", "llm/provider"}, []string{"github.com/nats-io", "github.com/tmc/langchaingo"}},
		{"skills", []string{"agent", "failure", "llm"}, []string{"github.com/nats-io", "github.com/tmc/langchaingo"}},
		{"mcp", []string{"agent", "failure", "llm"}, []string{"github.com/nats-io", "github.com/tmc/langchaingo"}},
		{"mcp/server", []string{"agent", "failure", "llm", "mcp", "skills"}, []string{"github.com/nats-io", "github.com/tmc/langchaingo", "github.com/a2aproject"}},
		// The gateway speaks NATS as a client; embedding it does not link the NATS server.
		{"mcp/gateway", []string{"agent", "failure", "mcp/server"}, []string{"github.com/nats-io/nats-server", "github.com/tmc/langchaingo", "github.com/a2aproject"}},
		{"bus", []string{"agent", "failure", "llm", "bus/task"}, []string{"github.com/tmc/langchaingo", "github.com/modelcontextprotocol"}},
		{"bus/task", nil, []string{"github.com/nats-io"}},
		// The JetStream stores (agent's contracts, A2A tasks): on the bus;
		// bus itself (messaging) does not import them.
		{"bus/store", []string{"agent", "failure", "llm", "bus"}, []string{"github.com/tmc/langchaingo", "github.com/modelcontextprotocol"}},
		// The web console reads the bus (and takes any agent.Runner and
		// agent.Inbox); it links no MCP or A2A SDK, and its browser driver
		// (chromedp) only in tests.
		{"bus/console", []string{"agent", "failure", "llm", "bus"}, []string{"github.com/tmc/langchaingo", "github.com/modelcontextprotocol", "github.com/a2aproject", "github.com/chromedp"}},
		// a2a takes any a2a-go task store; the JetStream one is bus/store's,
		// so a2a links no NATS at all.
		{"a2a", []string{"agent", "failure", "llm", "bus/task"}, []string{"github.com/nats-io", "github.com/tmc/langchaingo", "github.com/a2aproject/a2a-go/v2/a2agrpc"}},
		// The gRPC binding is opt-in: only a program importing a2a/grpc
		// links a2a-go's a2agrpc.
		{"a2a/grpc", []string{"a2a", "failure"}, []string{"github.com/nats-io", "github.com/tmc/langchaingo"}},
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
	// internal/ shows ownership: a package at the root of internal/ is a
	// leaf that imports nothing of this module but other root internal
	// packages and failure (itself a leaf); a private part of one public
	// package sits under that package's internal/ (the go tool enforces who
	// may import it). Test helpers and commands are exempt: they sit above
	// the packages they test.
	helpers := []string{"internal/testkit", "internal/testkit/authserver", "internal/readme", "internal/conformance/client", "internal/telemetry/e2etest"}
	for _, line := range goList(t, "-f", `{{.ImportPath}}:{{join .Imports ","}}`, "./internal/...") {
		pkg, imps, _ := strings.Cut(line, ":")
		own := strings.TrimPrefix(pkg, module)
		if slices.Contains(helpers, own) {
			continue
		}
		for _, imp := range strings.Split(imps, ",") {
			dep, ok := strings.CutPrefix(imp, module)
			if ok && !strings.HasPrefix(dep, "internal/") && dep != "failure" {
				t.Errorf("%s imports %s: a root internal package imports only leaves (internal/..., failure); move it under its owner", own, dep)
			}
		}
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
