package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// LoopConfig configures a [NewLoop] workflow.
type LoopConfig struct {
	Common
	// Body runs each iteration (required). Its default input is the task,
	// and from the second iteration on the task with the last output and
	// the feedback on it (see RenderRevision).
	Body Step
	// Check, if set, runs after the body each iteration: a reviewer that
	// judges the output. Its default input is the task and the output; its
	// answer is the iteration's Feedback.
	Check *Step
	// Until says whether the loop is done after an iteration. Default:
	// with a Check, when its feedback contains "APPROVED"
	// (case-insensitively); without one, after the first iteration. An
	// error fails the loop.
	// It sees the iteration as an Input: Index (from 0), Task (the loop's
	// input), Previous (the body's answer in this iteration) and Feedback
	// (the check's answer on it; empty without a Check).
	Until func(ctx context.Context, it Input) (bool, error)
	// MaxIterations is the loop's budget (default 5).
	MaxIterations int
	// AcceptLast makes a loop that exhausts its budget answer its last
	// output (with a failure event of kind Budget) instead of failing with
	// a Budget failure.
	AcceptLast bool
}

// loopRunner runs a body until a condition holds or its budget ends: a loop that
// refines a draft until a check passes.
type loopRunner struct {
	base
	body       Step
	check      *Step
	until      func(context.Context, Input) (bool, error)
	max        int
	acceptLast bool
}

var _ agent.Runner = (*loopRunner)(nil)

// approved is the default condition of a loop with a Check: the check's
// feedback contains "APPROVED" (case-insensitively), as a reviewer told to
// answer APPROVED when the draft is good does.
func approved(_ context.Context, it Input) (bool, error) {
	return strings.Contains(strings.ToLower(it.Feedback), "approved"), nil
}

// renderRevision is the default input of a loop's body after the first
// iteration: the task, the last output and the feedback on it.
func renderRevision(task, last, feedback string) string {
	s := fmt.Sprintf("Task:\n%s\n\nYour previous attempt:\n%s\n", task, last)
	if feedback != "" {
		s += "\nFeedback on it:\n" + feedback + "\n"
	}
	return s + "\nRevise the attempt to address the feedback."
}

// NewLoop validates cfg and returns the loop.
func NewLoop(cfg LoopConfig) (agent.Runner, error) {
	all := []Step{cfg.Body}
	if cfg.Check != nil {
		all = append(all, *cfg.Check)
	}
	b, err := newBase(cfg.Common, stepRunners(all)...)
	if err != nil {
		return nil, err
	}
	steps, err := checkSteps(cfg.Name, "step", all)
	if err != nil {
		return nil, err
	}
	l := &loopRunner{base: b, body: steps[0], until: cfg.Until, max: cfg.MaxIterations, acceptLast: cfg.AcceptLast}
	if cfg.Check != nil {
		l.check = &steps[1]
	}
	if l.max <= 0 {
		l.max = 5
	}
	if l.until == nil {
		if l.check != nil {
			l.until = approved
		} else {
			l.until = func(context.Context, Input) (bool, error) { return true, nil }
		}
	}
	return l, nil
}

// Stream runs the loop on input, yielding its events.
func (l *loopRunner) Stream(ctx context.Context, input string) iter.Seq2[agent.Event, error] {
	return l.stream(ctx, input, func(w *wrun, task string) (string, error) {
		var last, feedback string
		var data json.RawMessage
		for i := 0; i < l.max; i++ {
			in := task
			if i > 0 {
				in = renderRevision(task, last, feedback)
			}
			if l.body.Input != nil {
				in = l.body.Input(Input{Task: task, Previous: last, PreviousData: data, Feedback: feedback, Index: i})
			}
			ans, err := w.step(l.body, i, in, w.passOn(i == 0, true))
			if err != nil {
				return "", err
			}
			out := output(ans)
			last, data, feedback = out, ans.Data, ""
			w.ans.Data = data
			if l.check != nil {
				cin := fmt.Sprintf("Task:\n%s\n\nAttempt to review:\n%s", task, out)
				if l.check.Input != nil {
					cin = l.check.Input(Input{Task: task, Previous: out, Index: i})
				}
				cans, err := w.step(*l.check, i, cin, agent.Input{})
				if err != nil {
					return "", err
				}
				feedback = cans.Text
			}
			done, err := l.until(w.ctx, Input{Index: i, Task: task, Previous: out, Feedback: feedback})
			if err != nil {
				fe := &failure.Error{Kind: failure.KindOf(err), Source: failure.SourceAgent, Name: l.name,
					Message: "the loop's condition failed", Err: err}
				w.handle(fe, nil)
				return "", fe
			}
			if done {
				return out, nil
			}
		}
		budget := &failure.Error{Kind: failure.Budget, Source: failure.SourceAgent, Name: l.name,
			Message: fmt.Sprintf("the loop's condition did not hold within %d iterations", l.max)}
		o := w.b.pol().Handle(w.ctx, budget)
		w.ans.Failures++
		if l.acceptLast {
			o.Abort = false
			w.emit(agent.Event{Type: agent.EventFailure, Failure: agent.NewFailureInfo(o)})
			return last, nil
		}
		w.emit(agent.Event{Type: agent.EventFailure, Failure: agent.NewFailureInfo(o)})
		return "", budget
	})
}

// Output is the shape of the loop's answers: its body's.
func (l *loopRunner) Output() *llm.Output { return l.body.output() }
