package main

import (
	"context"
	"flag"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/eval"
	"github.com/switchboard-dev/switchboard/agent/eval/evaltest"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/skills"
)

var update = flag.Bool("update", false, "record testdata/cassettes again with the example's script")

// TestEvals replays the example's task from its cassette and scores its
// tool calls and answer.
func TestEvals(t *testing.T) {
	ctx := context.Background()
	ts, err := skills.New(ctx, skills.Config{Roots: []skills.Root{{FS: bundled, Dir: "skills", Label: "example"}}, Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ts.Close() })
	cfg := eval.Config{Cassettes: "testdata/cassettes",
		Agent: func(ctx context.Context, _ *eval.Case, m llm.Model) (agent.Runner, error) {
			return agent.New(ctx, agent.Config{Model: m, Toolsets: []agent.Toolset{ts}})
		}}
	if *update {
		cfg.Mode, cfg.Model = eval.Record, llm.NewScripted(append(script(), llm.SummarizeResults("Done:"))...)
	}
	rep := evaltest.RunFile(t, "testdata/evals.yaml", cfg)
	if rep.Passed != 1 {
		t.Errorf("passed %d of 1", rep.Passed)
	}
}
