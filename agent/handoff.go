package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// What a handoff passes on (Handoff.Context, HandoffOptions.Context).
const (
	handoffTask    = "task"
	handoffSummary = "summary"
	handoffFull    = "full"
)

// Handoff is a run's request to hand its conversation to another agent. A
// run whose model calls a handoff tool ends after that turn: its Answer
// carries the Handoff and the workflow that runs it (workflow.NewHandoffs)
// starts the target with the context asked for.
type Handoff struct {
	// To names the agent that takes over.
	To string `json:"to"`
	// Context is what the target receives: "task", "summary" or "full"
	// (see HandoffOptions.Context).
	Context string `json:"context"`
	// Task is what the target is asked to do.
	Task string `json:"task"`
	// Summary is the conversation's summary (context "summary").
	Summary string `json:"summary,omitempty"`
	// History is the conversation up to the handoff, every tool call
	// answered (context "full" only; not sent in events).
	History []llm.Message `json:"-"`
}

// Input renders what the target receives as its input: the task, preceded
// by the summary for context "summary".
func (h *Handoff) Input() string {
	if h.Context == handoffSummary && h.Summary != "" {
		return "Summary of the conversation so far:\n" + h.Summary + "\n\nTask:\n" + h.Task
	}
	return h.Task
}

// HandoffOptions configures a handoff tool. The zero value hands off the
// task alone.
type HandoffOptions struct {
	// Name is the tool's name (default "handoff_to_" and the target's name).
	Name string
	// Description tells the model when to hand off (default: a generic
	// sentence naming the target).
	Description string
	// Context is what the target receives. Passing everything is the
	// common complaint with handoffs, so the default is the task alone:
	//   - "task" (the default): only the task, as the handing-off model
	//     wrote it;
	//   - "summary": a summary of the conversation that the handing-off
	//     model writes in the handoff call (the tool's schema requires
	//     it), and the task;
	//   - "full": the whole conversation so far (Handoff.History), and the
	//     task as the next user message.
	Context string
}

// handoffTool is the tool a model calls to hand off.
type handoffTool struct {
	spec ToolSpec
	to   string
	mode string
}

// NewHandoffTool returns a tool that hands the conversation to the agent
// named to. Give it to an agent (Config.Tools) that runs inside a
// workflow.NewHandoffs, which knows the target by that name. When the model
// calls it, the run records the handoff and ends after the turn.
func NewHandoffTool(to string, opts *HandoffOptions) (Tool, error) {
	var o HandoffOptions
	if opts != nil {
		o = *opts
	}
	if strings.TrimSpace(to) == "" {
		return nil, failure.New(failure.Config, failure.SourceAgent, "a handoff needs the name of the agent to hand off to")
	}
	switch o.Context {
	case "":
		o.Context = handoffTask
	case handoffTask, handoffSummary, handoffFull:
	default:
		return nil, failure.New(failure.Config, failure.SourceAgent,
			fmt.Sprintf("unknown handoff context %q (want task, summary or full)", o.Context))
	}
	if o.Name == "" {
		o.Name = ToolName("handoff_to_" + to)
	}
	if o.Description == "" {
		o.Description = fmt.Sprintf("Hand the conversation to the agent %q, which continues it; your turn ends.", to)
	}
	props := `"task":{"type":"string","description":"What the next agent is to do, self-contained."}`
	required := `["task"]`
	if o.Context == handoffSummary {
		props += `,"summary":{"type":"string","description":"A summary of the conversation so far: what the next agent must know."}`
		required = `["task","summary"]`
	}
	schema := json.RawMessage(`{"type":"object","properties":{` + props + `},"required":` + required + `,"additionalProperties":false}`)
	return &handoffTool{to: to, mode: o.Context, spec: ToolSpec{Name: o.Name, Description: o.Description,
		InputSchema: schema, ReadOnly: true, Source: Provenance{Kind: failure.SourceHandoff, Name: to, Tool: o.Name}}}, nil
}

func (t *handoffTool) Spec() ToolSpec { return t.spec }

func (t *handoffTool) Call(_ context.Context, args json.RawMessage) (*Result, error) {
	var in struct {
		Task    string `json:"task"`
		Summary string `json:"summary"`
	}
	if err := json.Unmarshal(args, &in); err != nil || strings.TrimSpace(in.Task) == "" {
		return ErrorResult("a handoff needs a non-empty \"task\""), nil
	}
	res := TextResult(fmt.Sprintf("Handed off to %s.", t.to))
	res.Handoff = &Handoff{To: t.to, Context: t.mode, Task: in.Task, Summary: in.Summary}
	return res, nil
}
