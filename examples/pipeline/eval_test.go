package main

import (
	"context"
	"flag"
	"iter"
	"regexp"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/eval"
	"github.com/switchboard-dev/switchboard/agent/eval/evaltest"
	"github.com/switchboard-dev/switchboard/llm"
)

var update = flag.Bool("update", false, "record testdata/cassettes again with the example's scripted reviewer")

// pipelineRunner runs a pipeline of its own, closed when the run ends.
type pipelineRunner struct{ p *Pipeline }

func (r pipelineRunner) Name() string        { return r.p.Runner.Name() }
func (r pipelineRunner) Description() string { return r.p.Runner.Description() }
func (r pipelineRunner) Stream(ctx context.Context, input string) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		defer r.p.Close()
		for ev, err := range r.p.Runner.Stream(ctx, input) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

// TestEvals replays the pipeline's default review: the reviewer's turns
// come from the cassette; the planner, the specialists (performance in a
// worker process) and their tools run for real, so the reviewer's replayed
// request holds what they produced.
func TestEvals(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a worker process")
	}
	cfg := eval.Config{Cassettes: "testdata/cassettes", Parallel: 1,
		// The worker's process id differs per run.
		Ignore: []*regexp.Regexp{regexp.MustCompile(`worker process [0-9]+`)},
		Agent: func(ctx context.Context, _ *eval.Case, m llm.Model) (agent.Runner, error) {
			p, err := Start(ctx, Options{Worker: testWorker, Reviewer: m})
			if err != nil {
				return nil, err
			}
			return pipelineRunner{p}, nil
		}}
	if *update {
		cfg.Mode, cfg.Model = eval.Record, reviewerModel()
	}
	rep := evaltest.RunFile(t, "testdata/evals.yaml", cfg)
	if rep.Passed != 1 {
		t.Errorf("passed %d of 1", rep.Passed)
	}
}
