package main

import (
	"context"
	"flag"
	"iter"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/eval"
	"github.com/switchboard-dev/switchboard/agent/eval/evaltest"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/mcp"
)

var update = flag.Bool("update", false, "record testdata/cassettes again with evalScript")

// evalScript is the scripted model's turns for the eval: echo through the
// config's everything server, then answer.
func evalScript() []llm.Step {
	return []llm.Step{
		llm.Calls(llm.CallTool("e1", "mcp__everything__echo", map[string]any{"message": "hi"})),
		llm.SummarizeResults("Done:"),
	}
}

// managedRunner is an agent over a Manager, closed when the run ends.
type managedRunner struct {
	a *agent.Agent
	m *mcp.Manager
}

func (r managedRunner) Name() string        { return r.a.Name() }
func (r managedRunner) Description() string { return r.a.Description() }
func (r managedRunner) Stream(ctx context.Context, input string) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		defer r.m.Close()
		for ev, err := range r.a.Stream(ctx, input) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

// TestEvals replays an agent's turns from the cassette against the real
// servers of the example's .mcp.json (the reference everything server,
// from npm), so a changed tool list or result shows as a diverged replay.
func TestEvals(t *testing.T) {
	everything := filepath.Join("..", "..", "internal", "npm", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(everything); err != nil {
		t.Skip("npm peers not installed: run `make test` or `npm ci --prefix internal/npm`")
	}
	servers, err := loadServers(defaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	cfg := eval.Config{Cassettes: "testdata/cassettes",
		Agent: func(ctx context.Context, _ *eval.Case, model llm.Model) (agent.Runner, error) {
			m, err := mcp.New(ctx, mcp.Config{Servers: servers, MaxRestarts: 3})
			if err != nil {
				return nil, err
			}
			a, err := agent.New(ctx, agent.Config{Model: model, Toolsets: []agent.Toolset{m.Toolset()}, Permissions: agent.AllowAll()})
			if err != nil {
				m.Close()
				return nil, err
			}
			return managedRunner{a, m}, nil
		}}
	if *update {
		cfg.Mode, cfg.Model = eval.Record, llm.NewScripted(evalScript()...)
	}
	rep := evaltest.RunFile(t, "testdata/evals.yaml", cfg)
	if rep.Passed != 1 {
		t.Errorf("passed %d of 1", rep.Passed)
	}
}
