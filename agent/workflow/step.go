package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// Step is one runner in a workflow: an *agent.Agent, another workflow, a
// remote worker pool, or any agent.Runner.
type Step struct {
	// Runner runs the step (required).
	Runner agent.Runner
	// Name names the step in events and failure keys (default: the
	// runner's name). Names are unique within a workflow.
	Name string
	// Input renders the step's input. The default depends on the workflow:
	// the previous output in a sequential workflow, the task for a parallel branch,
	// the branches' results for a merge, the task with the last draft and
	// its feedback in a loop.
	Input func(in Input) string
	// Output, if set, asks the step's runner for a typed answer of this
	// shape (agent.Input.Output), in place of the runner's own. A typed
	// step's answer is its value: the next step's default input is its
	// JSON, and Input.PreviousData holds it.
	Output *llm.Output
}

// output is the shape of the step's answers: its Output, else its runner's.
func (s Step) output() *llm.Output {
	if s.Output != nil {
		return s.Output
	}
	return agent.OutputOf(s.Runner)
}

// output is what a step's answer passes on: its typed value as JSON text
// when it has one, else its text.
func output(a *agent.Answer) string {
	if len(a.Data) > 0 {
		return string(a.Data)
	}
	return a.Text
}

// Input is what a step's input is rendered from, and what a loop's Until
// condition sees of an iteration.
type Input struct {
	// Task is the workflow's own input.
	Task string
	// Previous is the previous step's output (sequential), the last output
	// of the body (loop), or the rendered branch results (the parallel merge step).
	// The output of a typed step is its answer's JSON.
	Previous string
	// PreviousData is the typed answer (agent.Answer.Data) of the step
	// Previous comes from, when it gave one (sequential, loop); decode it
	// with json.Unmarshal.
	PreviousData json.RawMessage
	// Feedback is the check's answer on Previous (loop).
	Feedback string
	// Index is the step's position, or the loop's iteration (from 0).
	Index int
	// Results are the branches' outcomes (Parallel's merge step).
	Results []BranchResult
}

// checkSteps validates steps and fills in their names.
func checkSteps(workflow, what string, steps []Step) ([]Step, error) {
	out := make([]Step, len(steps))
	seen := map[string]bool{}
	for i, s := range steps {
		if s.Runner == nil {
			return nil, failure.New(failure.Config, failure.SourceAgent,
				fmt.Sprintf("workflow %q: %s %d has no runner", workflow, what, i))
		}
		if s.Name == "" {
			s.Name = s.Runner.Name()
		}
		if seen[s.Name] {
			return nil, failure.New(failure.Config, failure.SourceAgent,
				fmt.Sprintf("workflow %q: two steps are named %q; give them distinct Step.Name values", workflow, s.Name))
		}
		seen[s.Name] = true
		out[i] = s
	}
	return out, nil
}

// stepResult is the outcome of one step's run, after the policy's retries.
type stepResult struct {
	ans  *agent.Answer
	err  error
	info agent.StepInfo
}

// runStep runs a step under the failure policy, passing each of its events
// (and its step_started events, one per attempt) to out. It may run on any
// goroutine; out must be safe to call from it.
//
// The step's run takes in as its agent.Input (never the workflow's own),
// with the step's Output unless in has one.
func (w *wrun) runStep(ctx context.Context, s Step, index int, input string, in agent.Input, out func(agent.Event)) stepResult {
	if in.Output == nil {
		in.Output = s.Output
	}
	ctx = agent.WithInput(ctx, in)
	start := time.Now()
	info := agent.StepInfo{Name: s.Name, Index: index}
	key := failure.Key{Source: failure.SourceAgent, Name: w.b.name + "/" + s.Name}
	var ans *agent.Answer
	err := w.b.pol().Execute(ctx, key, func(ctx context.Context) error {
		var err error
		ans, err = w.attempt(ctx, s.Runner, &info, input, out)
		return err
	})
	info.Elapsed = time.Since(start)
	if err != nil {
		return stepResult{err: stepErr(s.Name, err), info: info}
	}
	return stepResult{ans: ans, info: info}
}

// attempt runs r once as the step info describes: a step_started event,
// then every event of the run, nested; info.Attempt and info.Run are
// updated. A run that ends without an answer or an error is an Internal
// failure.
func (w *wrun) attempt(ctx context.Context, r agent.Runner, info *agent.StepInfo, input string, out func(agent.Event)) (*agent.Answer, error) {
	info.Attempt++
	started := *info
	out(agent.Event{Type: agent.EventStepStarted, Text: input, Step: &started})
	var ans *agent.Answer
	runCtx := agent.WithParent(ctx, agent.Parent{Run: w.id, Step: info.Name})
	for ev, err := range r.Stream(runCtx, input) {
		if info.Run == "" {
			info.Run = ev.Run
		}
		if ev.Type != "" {
			out(nest(ev))
		}
		if err != nil {
			return nil, err
		}
		if ev.Type == agent.EventFinal {
			ans = ev.Answer
			if ans == nil {
				ans = &agent.Answer{Run: ev.Run, Text: ev.Text, Handoff: ev.Handoff}
			}
		}
	}
	if ans == nil {
		return nil, &failure.Error{Kind: failure.Internal, Source: failure.SourceAgent, Name: info.Name,
			Message: "the step's run ended without an answer"}
	}
	return ans, nil
}

// stepErr names the step in a failure that does not name its source.
func stepErr(step string, err error) error {
	fe := failure.From(err)
	if fe.Name != "" {
		return err
	}
	cp := *fe
	cp.Name = step
	return &cp
}

// step runs a step on the workflow's goroutine and ends it (see end); in
// is what the step takes of the workflow's Input (see passOn).
func (w *wrun) step(s Step, index int, input string, in agent.Input) (*agent.Answer, error) {
	return w.end(w.runStep(w.ctx, s, index, input, in, w.emit))
}

// passOn is what a step takes of the workflow's own agent.Input: its Parts
// when the step takes the workflow's task (task), its Output when the
// step's answer is the workflow's (answers).
func (w *wrun) passOn(task, answers bool) agent.Input {
	var in agent.Input
	if task {
		in.Parts = w.in.Parts
	}
	if answers {
		in.Output = w.in.Output
	}
	return in
}

// end closes a step run on the workflow's goroutine: a failure is handled
// by the policy, an answer counted in the workflow's totals, and the step's
// EventStepFinished emitted.
func (w *wrun) end(r stepResult) (*agent.Answer, error) {
	if r.err != nil {
		w.handle(r.err, &r.info)
		w.finished(r, "", false)
		return nil, r.err
	}
	w.account(r.ans)
	w.finished(r, r.ans.Text, false)
	return r.ans, nil
}

// finished emits a step's EventStepFinished.
func (w *wrun) finished(r stepResult, output string, dropped bool) {
	info := r.info
	info.Dropped = dropped
	ev := agent.Event{Type: agent.EventStepFinished, Text: output, Step: &info}
	w.emit(ev)
}

// stepRunners are the runners of steps (nil ones left out).
func stepRunners(steps []Step) []agent.Runner {
	var rs []agent.Runner
	for _, s := range steps {
		if s.Runner != nil {
			rs = append(rs, s.Runner)
		}
	}
	return rs
}
