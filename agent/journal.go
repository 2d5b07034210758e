package agent

import (
	"context"
	"encoding/json"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// callJournal is the durable side of a batch of tool calls: it settles
// the calls a resumed run already knows the outcome of, records the intent
// of a call that is not read-only before it runs, holds back the result of
// a call that parked, and saves each result. A run without a RunStore has
// noJournal, which does none of it; runCalls calls it either way.
type callJournal interface {
	// resume settles call i of a resumed batch into results (its known
	// result, or in doubt) and reports whether it did.
	resume(turn int, c llm.ToolCall, info *CallInfo, results []llm.ToolResult, i int) bool
	// intend records that c is about to run; a non-nil outcome is why it
	// may not.
	intend(ctx context.Context, c llm.ToolCall, spec ToolSpec, args json.RawMessage) *failure.Outcome
	// parked reports a call that parked: it gets no result until the run
	// resumes.
	parked(turn int, info *CallInfo, m callMsg) bool
	// save records a call's result; an error stops the run.
	save(c llm.ToolCall, res llm.ToolResult) error
}

// journal is the run's call journal.
func (r *run) journal() callJournal {
	if r.d == nil {
		return noJournal{}
	}
	return runJournal{r}
}

// noJournal is the journal of a run that is not durable.
type noJournal struct{}

func (noJournal) resume(int, llm.ToolCall, *CallInfo, []llm.ToolResult, int) bool { return false }
func (noJournal) intend(context.Context, llm.ToolCall, ToolSpec, json.RawMessage) *failure.Outcome {
	return nil
}
func (noJournal) parked(int, *CallInfo, callMsg) bool     { return false }
func (noJournal) save(llm.ToolCall, llm.ToolResult) error { return nil }

// runJournal is the journal of a durable run, in its RunStore (intent.go,
// park.go).
type runJournal struct{ r *run }

func (j runJournal) resume(turn int, c llm.ToolCall, info *CallInfo, results []llm.ToolResult, i int) bool {
	return j.r.resumeCall(turn, c, info, results, i)
}

func (j runJournal) intend(ctx context.Context, c llm.ToolCall, spec ToolSpec, args json.RawMessage) *failure.Outcome {
	return j.r.recordIntent(ctx, c, spec, args)
}

func (j runJournal) parked(turn int, info *CallInfo, m callMsg) bool {
	return j.r.parkedCall(turn, info, m)
}

func (j runJournal) save(c llm.ToolCall, res llm.ToolResult) error { return j.r.saveResult(c, res) }
