package workflow

import (
	"context"
	"encoding/json"
	"iter"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// SequentialConfig configures a [NewSequential] workflow.
type SequentialConfig struct {
	Common
	// Steps run in order (at least one). By default each step's input is
	// the previous step's output, and the first step's is the workflow's
	// input.
	Steps []Step
}

// sequentialRunner runs steps in order, the output of one feeding the next. The
// last step's output is the workflow's answer. A step that fails after the
// policy's retries fails the workflow; later steps do not run.
type sequentialRunner struct {
	base
	steps []Step
}

var _ agent.Runner = (*sequentialRunner)(nil)

// NewSequential validates cfg and returns the workflow.
func NewSequential(cfg SequentialConfig) (agent.Runner, error) {
	b, err := newBase(cfg.Common, stepRunners(cfg.Steps)...)
	if err != nil {
		return nil, err
	}
	if len(cfg.Steps) == 0 {
		return nil, failure.New(failure.Config, failure.SourceAgent, "workflow "+cfg.Name+": a sequence needs at least one step")
	}
	steps, err := checkSteps(cfg.Name, "step", cfg.Steps)
	if err != nil {
		return nil, err
	}
	return &sequentialRunner{base: b, steps: steps}, nil
}

// Stream runs the sequence on input, yielding its events.
func (s *sequentialRunner) Stream(ctx context.Context, input string) iter.Seq2[agent.Event, error] {
	return s.stream(ctx, input, func(w *wrun, task string) (string, error) {
		prev := task
		var data json.RawMessage
		for i, st := range s.steps {
			in := prev
			if st.Input != nil {
				in = st.Input(Input{Task: task, Previous: prev, PreviousData: data, Index: i})
			}
			ans, err := w.step(st, i, in, w.passOn(i == 0, i == len(s.steps)-1))
			if err != nil {
				return "", err
			}
			prev, data = output(ans), ans.Data
		}
		w.ans.Data = data
		return prev, nil
	})
}

// Output is the shape of the sequence's answers: its last step's.
func (s *sequentialRunner) Output() *llm.Output { return s.steps[len(s.steps)-1].output() }
