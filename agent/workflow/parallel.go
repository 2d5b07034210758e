package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// BranchResult is a branch's outcome, as the merge step receives it.
type BranchResult struct {
	// Name is the branch's step name.
	Name string `json:"name"`
	// Output is the branch's answer (empty when it failed): the JSON of a
	// typed answer, which Data holds too.
	Output string          `json:"output,omitempty"`
	Data   json.RawMessage `json:"data,omitempty"`
	// Failed marks a dropped branch; Note says why, worded for a model.
	Failed bool   `json:"failed,omitempty"`
	Note   string `json:"note,omitempty"`
	// Err is the branch's failure.
	Err error `json:"-"`
}

// ParallelConfig configures a [NewParallel] workflow.
type ParallelConfig struct {
	Common
	// Branches run concurrently on the same task (at least one). By
	// default each branch's input is the workflow's input.
	Branches []Step
	// MaxParallel bounds the branches running at once (default 4).
	MaxParallel int
	// DropFailed says what a branch that still fails after the failure
	// policy's retries does. False (the default): it fails the whole
	// workflow with its failure and cancels the other branches. True: it is
	// dropped, the merge step gets a note saying it failed and why (in words
	// fit for a model), and the workflow goes on; if every branch fails, the
	// workflow fails.
	DropFailed bool
	// Merge, if set, runs after the branches; its default input is the task
	// followed by every branch's output (see RenderResults), and its answer
	// is the workflow's. Without it the workflow answers RenderResults.
	Merge *Step
}

// parallelRunner fans a task out to branches with bounded concurrency, then
// merges their outputs.
type parallelRunner struct {
	base
	branches []Step
	max      int
	drop     bool
	merge    *Step
}

var _ agent.Runner = (*parallelRunner)(nil)

// NewParallel validates cfg and returns the workflow.
func NewParallel(cfg ParallelConfig) (agent.Runner, error) {
	all := cfg.Branches
	if cfg.Merge != nil {
		all = append(append([]Step(nil), cfg.Branches...), *cfg.Merge)
	}
	b, err := newBase(cfg.Common, stepRunners(all)...)
	if err != nil {
		return nil, err
	}
	if len(cfg.Branches) == 0 {
		return nil, failure.New(failure.Config, failure.SourceAgent, "workflow "+cfg.Name+": parallel needs at least one branch")
	}
	steps, err := checkSteps(cfg.Name, "branch", all)
	if err != nil {
		return nil, err
	}
	p := &parallelRunner{base: b, branches: steps[:len(cfg.Branches)], max: cfg.MaxParallel, drop: cfg.DropFailed}
	if cfg.Merge != nil {
		p.merge = &steps[len(steps)-1]
	}
	if p.max <= 0 {
		p.max = 4
	}
	return p, nil
}

// renderResults is the default input of a merge step: the task, then each
// branch's output under its name, and a note for each dropped branch.
func renderResults(task string, results []BranchResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Task:\n%s\n\nResults of %d branches:\n", task, len(results))
	for _, r := range results {
		if r.Failed {
			fmt.Fprintf(&b, "\n## %s (failed; dropped)\n%s\n", r.Name, r.Note)
			continue
		}
		fmt.Fprintf(&b, "\n## %s\n%s\n", r.Name, r.Output)
	}
	return b.String()
}

// branchMsg is what a branch's goroutine tells the workflow's goroutine.
type branchMsg struct {
	i    int
	ev   *agent.Event
	done *stepResult
}

// Stream runs the branches and the merge on input, yielding their events.
func (p *parallelRunner) Stream(ctx context.Context, input string) iter.Seq2[agent.Event, error] {
	return p.stream(ctx, input, func(w *wrun, task string) (string, error) {
		bctx, cancelBranches := context.WithCancelCause(w.ctx)
		defer cancelBranches(nil)
		msgs := make(chan branchMsg, 64)
		sem := make(chan struct{}, p.max)
		var wg sync.WaitGroup
		for i, st := range p.branches {
			in := task
			if st.Input != nil {
				in = st.Input(Input{Task: task, Index: i})
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				select {
				case sem <- struct{}{}:
					defer func() { <-sem }()
				case <-bctx.Done():
					r := stepResult{err: stepErr(st.Name, w.endErrOf(bctx)), info: agent.StepInfo{Name: st.Name, Index: i}}
					msgs <- branchMsg{i: i, done: &r}
					return
				}
				r := w.runStep(bctx, st, i, in, w.passOn(true, false), func(ev agent.Event) { msgs <- branchMsg{i: i, ev: &ev} })
				msgs <- branchMsg{i: i, done: &r}
			}()
		}
		go func() { wg.Wait(); close(msgs) }()

		results := make([]BranchResult, len(p.branches))
		var fatal error
		ok := 0
		// The loop drains every message, so branches never block on a
		// workflow that has stopped.
		for m := range msgs {
			if m.ev != nil {
				w.emit(*m.ev)
				continue
			}
			r := *m.done
			res := BranchResult{Name: p.branches[m.i].Name}
			if r.err == nil {
				w.account(r.ans)
				res.Output, res.Data = output(r.ans), r.ans.Data
				ok++
				w.finished(r, r.ans.Text, false)
				results[m.i] = res
				continue
			}
			res.Failed, res.Err = true, r.err
			if fatal != nil || w.ctx.Err() != nil {
				// Cancelled because of another branch's failure, or the
				// workflow's: not a failure of its own.
				w.finished(r, "", false)
				results[m.i] = res
				continue
			}
			o := w.handle(r.err, &r.info)
			res.Note = o.ModelText
			if !p.drop {
				fatal = r.err
				cancelBranches(r.err)
			}
			w.finished(r, "", p.drop)
			results[m.i] = res
		}
		if fatal != nil {
			return "", fatal
		}
		if w.ctx.Err() != nil {
			return "", w.endErr()
		}
		if ok == 0 {
			return "", &failure.Error{Kind: failure.KindOf(results[0].Err), Source: failure.SourceAgent, Name: p.name,
				Message: fmt.Sprintf("all %d branches failed", len(results)), Err: results[0].Err}
		}
		merged := renderResults(task, results)
		if p.merge == nil {
			return merged, nil
		}
		in := merged
		if p.merge.Input != nil {
			in = p.merge.Input(Input{Task: task, Previous: merged, Index: len(p.branches), Results: results})
		}
		ans, err := w.step(*p.merge, len(p.branches), in, w.passOn(false, true))
		if err != nil {
			return "", err
		}
		w.ans.Data = ans.Data
		return ans.Text, nil
	})
}

// endErrOf is the failure of a step that never started because ctx ended.
func (w *wrun) endErrOf(ctx context.Context) error {
	cause := context.Cause(ctx)
	var fe *failure.Error
	if cause != nil && errors.As(cause, &fe) {
		return &failure.Error{Kind: failure.Canceled, Source: failure.SourceAgent, Err: cause,
			Message: "not started: " + fe.Message}
	}
	return &failure.Error{Kind: failure.Canceled, Source: failure.SourceAgent, Err: cause, Message: "not started: the workflow was cancelled"}
}

// Output is the shape of the workflow's answers: its merge step's (nil
// without one: the rendered results are text).
func (p *parallelRunner) Output() *llm.Output {
	if p.merge == nil {
		return nil
	}
	return p.merge.output()
}
