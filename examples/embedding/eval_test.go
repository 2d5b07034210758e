package main

import (
	"context"
	"flag"
	"iter"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/eval"
	"github.com/switchboard-dev/switchboard/agent/eval/evaltest"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/skills"
)

var update = flag.Bool("update", false, "record testdata/cassettes again with evalScript")

// evalScript is the scripted model's turns for the eval: activate the
// project's triage skill, then answer.
func evalScript() []llm.Step {
	return []llm.Step{
		llm.Calls(llm.CallTool("s1", skills.ToolActivate, map[string]any{"name": "triage"})),
		llm.SummarizeResults("Done:"),
	}
}

// wiredRunner is the README's agent, whose closeAll runs when the run ends.
type wiredRunner struct {
	a        *agent.Agent
	closeAll func() error
}

func (r wiredRunner) Name() string        { return r.a.Name() }
func (r wiredRunner) Description() string { return r.a.Description() }
func (r wiredRunner) Stream(ctx context.Context, input string) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		defer r.closeAll()
		for ev, err := range r.a.Stream(ctx, input) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

// TestEvals replays the README's wiring in a project folder with an
// .mcp.json and a triage skill: the model's turns come from the cassette,
// the bus, the MCP manager and the skills are real.
func TestEvals(t *testing.T) {
	pkg, err := os.Getwd()
	must(t, err)
	dir := t.TempDir()
	skill := filepath.Join(dir, ".agents", "skills", "triage")
	must(t, os.MkdirAll(skill, 0o755))
	must(t, os.WriteFile(filepath.Join(skill, "SKILL.md"), []byte("---\nname: triage\ndescription: Sorts issues by urgency.\n---\nSort them by urgency.\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(`{"mcpServers":{}}`), 0o644))
	t.Chdir(dir)
	t.Setenv("HOME", dir)
	cfg := eval.Config{Cassettes: filepath.Join(pkg, "testdata", "cassettes"),
		// The project folder is a new temporary directory per run.
		Ignore: []*regexp.Regexp{regexp.MustCompile(`[^\s"]*TestEvals[0-9]+/[0-9]+`)},
		Agent: func(ctx context.Context, _ *eval.Case, m llm.Model) (agent.Runner, error) {
			a, closeAll, err := newAgent(ctx, m)
			if err != nil {
				return nil, err
			}
			return wiredRunner{a, closeAll}, nil
		}}
	if *update {
		cfg.Mode, cfg.Model = eval.Record, llm.NewScripted(evalScript()...)
	}
	rep := evaltest.RunFile(t, filepath.Join(pkg, "testdata", "evals.yaml"), cfg)
	if rep.Passed != 1 {
		t.Errorf("passed %d of 1", rep.Passed)
	}
}
