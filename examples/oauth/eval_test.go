package main

import (
	"context"
	"flag"
	"iter"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/eval"
	"github.com/switchboard-dev/switchboard/agent/eval/evaltest"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/mcp"
)

var update = flag.Bool("update", false, "record testdata/cassettes again with evalScript")

// evalScript is the scripted model's turns for the eval: read the latest
// note through the Manager's toolset, then answer with it.
func evalScript() []llm.Step {
	return []llm.Step{
		llm.Calls(llm.CallTool("n1", "mcp__notes__latest_note", map[string]any{})),
		llm.SummarizeResults("Latest note:"),
	}
}

// managedRunner is an agent over a replica's Manager, closed when the run
// ends.
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

// TestEvals replays an agent's turns from the cassette against the
// example's real servers: its call of latest_note goes through a replica's
// Manager, which logs in through the bus (the browser answers once).
func TestEvals(t *testing.T) {
	n, err := startNotes(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	cfg := eval.Config{Cassettes: "testdata/cassettes",
		Agent: func(ctx context.Context, _ *eval.Case, model llm.Model) (agent.Runner, error) {
			m, err := n.manager(ctx)
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
	if n.person.logins != 1 || n.as.Grants("authorization_code") != 1 {
		t.Errorf("logins %d, authorization code grants %d; want 1 and 1", n.person.logins, n.as.Grants("authorization_code"))
	}
}
