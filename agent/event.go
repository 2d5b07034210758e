package agent

import (
	"context"
	"encoding/json"
	"time"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/redact"
	"github.com/switchboard-dev/switchboard/llm"
)

// EventType names a run event.
type EventType string

// Run event types, in the order a run produces them.
const (
	// EventRunStarted opens a run; Text is the input and Parts its media
	// (Input.Parts).
	EventRunStarted EventType = "run_started"
	// EventTurnStarted opens a model turn; Turn is its number (from 1) and
	// Context the breakdown of the prompt about to be sent.
	EventTurnStarted EventType = "turn_started"
	// EventModelText is streamed model text; Text is a delta.
	EventModelText EventType = "model_text"
	// EventModelReasoning is the model's reasoning of a turn, before its
	// answer (Text; Config.Reasoning), just before the turn's
	// EventModelTurn. It is never the answer's text.
	EventModelReasoning EventType = "model_reasoning"
	// EventModelTurn closes a model turn; Usage is the turn's usage, Cost
	// what it cost (Config.Prices) and Calls the tool calls it asked for.
	EventModelTurn EventType = "model_turn"
	// EventToolStarted: a tool call began; Call is set.
	EventToolStarted EventType = "tool_started"
	// EventToolProgress: a tool reported progress; Call and Progress are set.
	EventToolProgress EventType = "tool_progress"
	// EventToolFinished: a tool call ended; Call and Result are set.
	EventToolFinished EventType = "tool_finished"
	// EventFailure: a failure was handled; Failure is set (and Call, when the
	// failure belongs to a tool call).
	EventFailure EventType = "failure"
	// EventGuard: a guard tripped, rewrote text or (DetectOnly) would
	// have; Guard is set (and Call, at a tool call or result). A trip is
	// followed by its EventFailure.
	EventGuard EventType = "guard"
	// EventToolsChanged: a toolset's list changed.
	EventToolsChanged EventType = "tools_changed"
	// EventStepStarted: a workflow step (or branch, or iteration) began;
	// Step is set and Text is the step's input.
	EventStepStarted EventType = "step_started"
	// EventStepFinished: a workflow step ended; Step is set and Text is its
	// output (empty when it failed or was dropped; Failure says why).
	EventStepFinished EventType = "step_finished"
	// EventNested carries an event of a run started inside this one (an
	// agent called as a tool, a workflow's step, a remote worker's run) in
	// Nested. Events of deeper runs are forwarded as they are, so Nested is
	// never itself an EventNested; its Parent field places it in the tree.
	EventNested EventType = "nested"
	// EventHandoff: the run handed the conversation to another agent
	// (Handoff is set). The run then ends with EventFinal.
	EventHandoff EventType = "handoff"
	// EventFinal closes a successful run; Text is the answer and Answer
	// summarises the run.
	EventFinal EventType = "final"
	// EventRunFailed closes a run that ended with an error; Failure says
	// why. Stream yields it paired with the run's error.
	EventRunFailed EventType = "run_failed"
)

// CallInfo identifies a tool call in events.
type CallInfo struct {
	ID     string          `json:"id"`
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args,omitempty"`
	Source Provenance      `json:"source"`
	// Elapsed is set on EventToolFinished.
	Elapsed time.Duration `json:"elapsed,omitempty"`
}

// Progress is a progress report of a long-running call.
type Progress struct {
	// Progress so far, in units of Total (or unitless when Total is 0).
	Progress float64 `json:"progress"`
	// Total, when known.
	Total float64 `json:"total,omitempty"`
	// Message describes the step.
	Message string `json:"message,omitempty"`
}

// FailureInfo is a handled failure in events: what kind, from where, and
// what was decided. The cause's text is redacted.
type FailureInfo struct {
	Kind      failure.Kind   `json:"kind"`
	Source    failure.Source `json:"source,omitempty"`
	Name      string         `json:"name,omitempty"`
	Tool      string         `json:"tool,omitempty"`
	Action    string         `json:"action"`
	Message   string         `json:"message"`
	Retryable bool           `json:"retryable,omitempty"`
}

// NewFailureInfo summarises a policy outcome for an event. Message is the
// failure's own model-safe message, or else its redacted cause.
func NewFailureInfo(o failure.Outcome) *FailureInfo {
	msg := o.Err.Message
	if msg == "" && o.Err.Err != nil {
		msg = o.Err.Err.Error()
	}
	if msg == "" {
		msg = o.Err.Kind.String()
	}
	action := "report"
	if o.Abort {
		action = "abort"
	}
	return &FailureInfo{
		Kind: o.Err.Kind, Source: o.Err.Source, Name: o.Err.Name, Tool: o.Err.Tool,
		Action: action, Message: redact.Redact(msg), Retryable: o.Err.Retryable,
	}
}

// Event is one step of a run. Events are JSON-encodable; the bus publishes
// them as they are.
type Event struct {
	Type     EventType    `json:"type"`
	Run      string       `json:"run"`
	Seq      int          `json:"seq"`
	Time     time.Time    `json:"time"`
	Turn     int          `json:"turn,omitempty"`
	Text     string       `json:"text,omitempty"`
	Call     *CallInfo    `json:"call,omitempty"`
	Result   *Result      `json:"result,omitempty"`
	Progress *Progress    `json:"progress,omitempty"`
	Failure  *FailureInfo `json:"failure,omitempty"`
	Usage    *llm.Usage   `json:"usage,omitempty"`
	// Cost is what an EventModelTurn's turn cost.
	Cost *llm.Cost `json:"cost,omitempty"`
	// Calls are the tool calls an EventModelTurn asked for.
	Calls []llm.ToolCall `json:"calls,omitempty"`
	// Parts are the media of EventRunStarted's input. Events leave out the
	// data of parts over 16 KiB (here and in Result): such a part is a text
	// part that describes it.
	Parts []llm.Part `json:"parts,omitempty"`
	// Toolset names the toolset of an EventToolsChanged.
	Toolset string `json:"toolset,omitempty"`
	// Agent names the agent (or workflow) whose run this is.
	Agent string `json:"agent,omitempty"`
	// Parent places a nested run in its caller: set on every event of a run
	// started inside another run's tool call or workflow step.
	Parent *Parent `json:"parent,omitempty"`
	// Step describes the workflow step of EventStepStarted and
	// EventStepFinished.
	Step *StepInfo `json:"step,omitempty"`
	// Nested is the forwarded event of an EventNested.
	Nested *Event `json:"nested,omitempty"`
	// Handoff is set on EventHandoff and on the EventFinal of a run that
	// ended by handing off.
	Handoff *Handoff `json:"handoff,omitempty"`
	// Answer summarises the run on EventFinal.
	Answer *Answer `json:"answer,omitempty"`
	// Guard is a guard's verdict on EventGuard.
	Guard *GuardInfo `json:"guard,omitempty"`
	// Context is the prompt's breakdown on EventTurnStarted.
	Context *ContextInfo `json:"context,omitempty"`
}

// Parent is where a nested run sits in the run that started it.
type Parent struct {
	// Run is the calling run's id.
	Run string `json:"run"`
	// Call is the tool call that started the nested run, if a tool call did.
	Call string `json:"call,omitempty"`
	// Step is the workflow step that started it, if a workflow did.
	Step string `json:"step,omitempty"`

	// call is the tool call the workflow itself runs in, if any: runs
	// inside its steps still belong to that call (CallFromContext).
	call *Call
}

// StepInfo describes a workflow step in events.
type StepInfo struct {
	// Name is the step's name (its runner's name unless configured).
	Name string `json:"name"`
	// Index is the step's position: in a sequence, among parallel
	// branches, or the iteration of a loop (from 0).
	Index int `json:"index"`
	// Attempt counts the runs of this step (from 1); above 1 when the
	// failure policy retried it.
	Attempt int `json:"attempt,omitempty"`
	// Run is the step's own run id (its events arrive as EventNested).
	Run string `json:"run,omitempty"`
	// Dropped is set on the EventStepFinished of a failed parallel branch
	// that was dropped with a note instead of failing the workflow.
	Dropped bool `json:"dropped,omitempty"`
	// Elapsed is set on EventStepFinished.
	Elapsed time.Duration `json:"elapsed,omitempty"`
}

// EventSink receives every event of every run, in order per run. The bus
// implements it; Emit must not block for long (buffer or drop, and report
// drops through the failure policy). An event and what it points to are not
// changed after Emit, so a sink may keep it and encode it later.
type EventSink interface {
	Emit(ctx context.Context, ev Event)
}

// eventSinkFunc adapts a function to EventSink.
type eventSinkFunc func(ctx context.Context, ev Event)

// Emit calls f.
func (f eventSinkFunc) Emit(ctx context.Context, ev Event) { f(ctx, ev) }
