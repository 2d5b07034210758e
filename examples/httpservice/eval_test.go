package main

import (
	"context"
	"flag"
	"regexp"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/eval"
	"github.com/switchboard-dev/switchboard/agent/eval/evaltest"
	"github.com/switchboard-dev/switchboard/llm"
)

var update = flag.Bool("update", false, "record testdata/cassettes again with the example's scripted model")

// TestEvals replays the example's question from its cassette through the
// service's agent and its real get_time tool, and scores the call and the
// answer.
func TestEvals(t *testing.T) {
	cfg := eval.Config{Cassettes: "testdata/cassettes",
		// The tool tells the current time, which differs per run.
		Ignore: []*regexp.Regexp{regexp.MustCompile(`[0-9]{2}:[0-9]{2} JST`)},
		Agent: func(ctx context.Context, _ *eval.Case, m llm.Model) (agent.Runner, error) {
			return newAgent(ctx, m)
		}}
	if *update {
		cfg.Mode, cfg.Model = eval.Record, scriptedClock()
	}
	rep := evaltest.RunFile(t, "testdata/evals.yaml", cfg)
	if rep.Passed != 1 {
		t.Errorf("passed %d of 1", rep.Passed)
	}
}
