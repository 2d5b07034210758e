package main

import (
	"context"
	"flag"
	"io"
	"iter"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/eval"
	"github.com/switchboard-dev/switchboard/agent/eval/evaltest"
	"github.com/switchboard-dev/switchboard/llm"
)

var update = flag.Bool("update", false, "record testdata/cassettes again with the demo's script")

// worldRunner runs the demo's main agent in a world of its own, closed
// when the run ends.
type worldRunner struct{ w *world }

func (r worldRunner) Name() string        { return r.w.agent.Name() }
func (r worldRunner) Description() string { return r.w.agent.Description() }
func (r worldRunner) Stream(ctx context.Context, input string) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		defer r.w.close()
		for ev, err := range r.w.agent.Stream(ctx, input) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

// TestEvals replays the demo's task: the main agent's turns come from the
// cassette, everything else (bus, MCP file server, skill, A2A researcher)
// runs for real.
func TestEvals(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the demo's world")
	}
	cfg := eval.Config{Cassettes: "testdata/cassettes", Parallel: 1,
		// A2A task and context ids, and the workspace path, differ per run.
		Ignore: []*regexp.Regexp{regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), regexp.MustCompile(`switchboard-demo-[0-9]+`)},
		Agent: func(ctx context.Context, _ *eval.Case, m llm.Model) (agent.Runner, error) {
			w, err := newWorld(ctx, options{model: "scripted", step: time.Millisecond, mainModel: m}, io.Discard, strings.NewReader(""), io.Discard)
			if err != nil {
				return nil, err
			}
			return worldRunner{w}, nil
		}}
	if *update {
		cfg.Mode, cfg.Model = eval.Record, llm.NewScripted(mainScript("a2a__researcher")...)
	}
	rep := evaltest.RunFile(t, "testdata/evals.yaml", cfg)
	if rep.Passed != 1 {
		t.Errorf("passed %d of 1", rep.Passed)
	}
}
