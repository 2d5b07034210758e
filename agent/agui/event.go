package agui

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/switchboard-dev/switchboard/agent"
)

// Event is one AG-UI event, as it goes on the wire (the field names of
// @ag-ui/core). Type says which fields are set.
type Event struct {
	Type          string          `json:"type"`
	Timestamp     int64           `json:"timestamp,omitempty"`
	ThreadID      string          `json:"threadId,omitempty"`
	RunID         string          `json:"runId,omitempty"`
	ParentRunID   string          `json:"parentRunId,omitempty"`
	MessageID     string          `json:"messageId,omitempty"`
	Role          string          `json:"role,omitempty"`
	Delta         any             `json:"delta,omitempty"`
	ToolCallID    string          `json:"toolCallId,omitempty"`
	ToolCallName  string          `json:"toolCallName,omitempty"`
	Content       *string         `json:"content,omitempty"`
	Snapshot      any             `json:"snapshot,omitempty"`
	StepName      string          `json:"stepName,omitempty"`
	SubagentRunID string          `json:"subagentRunId,omitempty"`
	Name          string          `json:"name,omitempty"`
	ParentToolID  string          `json:"parentToolCallId,omitempty"`
	Message       string          `json:"message,omitempty"`
	Code          string          `json:"code,omitempty"`
	Result        any             `json:"result,omitempty"`
	Outcome       *Outcome        `json:"outcome,omitempty"`
	Raw           json.RawMessage `json:"-"`
}

// Outcome is why RUN_FINISHED (or SUBAGENT_FINISHED) ended its run.
type Outcome struct {
	// Type is "success", "interrupt" or "cancelled" (RUN_FINISHED), or
	// "success" or "suspended" (SUBAGENT_FINISHED).
	Type         string      `json:"type"`
	Interrupts   []Interrupt `json:"interrupts,omitempty"`
	InterruptIDs []string    `json:"interruptIds,omitempty"`
	// PendingToolCallIDs names the calls of client tools a successful run
	// left for the application to answer.
	PendingToolCallIDs []string `json:"pendingToolCallIds,omitempty"`
}

// Interrupt is a question the run needs answered before it continues: a
// permission ask (Reason "tool_approval", ToolCallID set) or an elicitation.
type Interrupt struct {
	ID             string          `json:"id"`
	Reason         string          `json:"reason"`
	Message        string          `json:"message,omitempty"`
	ToolCallID     string          `json:"toolCallId,omitempty"`
	ResponseSchema json.RawMessage `json:"responseSchema,omitempty"`
	SubagentRunID  string          `json:"subagentRunId,omitempty"`
}

// AG-UI event types this package produces.
const (
	RunStarted              = "RUN_STARTED"
	RunFinished             = "RUN_FINISHED"
	RunError                = "RUN_ERROR"
	TextMessageStart        = "TEXT_MESSAGE_START"
	TextMessageContent      = "TEXT_MESSAGE_CONTENT"
	TextMessageEnd          = "TEXT_MESSAGE_END"
	ToolCallStart           = "TOOL_CALL_START"
	ToolCallArgs            = "TOOL_CALL_ARGS"
	ToolCallEnd             = "TOOL_CALL_END"
	ToolCallResult          = "TOOL_CALL_RESULT"
	StateSnapshot           = "STATE_SNAPSHOT"
	StateDelta              = "STATE_DELTA"
	StepStarted             = "STEP_STARTED"
	StepFinished            = "STEP_FINISHED"
	SubagentStarted         = "SUBAGENT_STARTED"
	SubagentFinished        = "SUBAGENT_FINISHED"
	SubagentError           = "SUBAGENT_ERROR"
	ReasoningStart          = "REASONING_START"
	ReasoningMessageStart   = "REASONING_MESSAGE_START"
	ReasoningMessageContent = "REASONING_MESSAGE_CONTENT"
	ReasoningMessageEnd     = "REASONING_MESSAGE_END"
	ReasoningEnd            = "REASONING_END"
)

// Mapper turns the events of one Switchboard run into AG-UI events. It
// keeps what the translation needs across events (the open text message,
// open steps and subagents, results already sent); one Mapper serves one
// run, across the HTTP requests that stream it.
type Mapper struct {
	threadID, runID string
	seq             int
	open            map[string]string // run → open text message id ("" key: top run)
	steps           []openStep
	subagents       []string
	results         map[string]bool
	top             string
	turn            int
	state           bool
}

type openStep struct{ name, sub string }

// NewMapper returns a Mapper for a run of thread threadID whose AG-UI run
// id is runID. When state is true the mapper keeps a "switchboard" key of
// the agent state (run, turn, usage) with STATE_SNAPSHOT and STATE_DELTA.
func NewMapper(threadID, runID string, state bool) *Mapper {
	return &Mapper{threadID: threadID, runID: runID, open: map[string]string{}, results: map[string]bool{}, state: state}
}

func (m *Mapper) id(prefix string) string {
	m.seq++
	return fmt.Sprintf("%s-%s-%d", prefix, m.runID, m.seq)
}

// Start returns the events that open an AG-UI run: RUN_STARTED and, when
// state is kept, a STATE_SNAPSHOT of state (an object) with the
// "switchboard" key. A resumed run passes parentRunID and reopens the
// steps and subagents the interrupt closed.
func (m *Mapper) Start(runID, parentRunID string, state map[string]any) []Event {
	m.runID = runID
	out := []Event{{Type: RunStarted, ThreadID: m.threadID, RunID: runID, ParentRunID: parentRunID}}
	if m.state && state != nil {
		state["switchboard"] = map[string]any{"run": m.top, "turn": m.turn}
		out = append(out, Event{Type: StateSnapshot, Snapshot: state})
	}
	for _, s := range m.subagents {
		out = append(out, Event{Type: SubagentStarted, SubagentRunID: s, Name: s})
	}
	for _, s := range m.steps {
		out = append(out, Event{Type: StepStarted, StepName: s.name, SubagentRunID: s.sub})
	}
	return out
}

// Map translates one Switchboard event.
func (m *Mapper) Map(ev agent.Event) []Event {
	if ev.Type == agent.EventNested && ev.Nested != nil {
		return m.nested(*ev.Nested)
	}
	var out []Event
	switch ev.Type {
	case agent.EventRunStarted:
		m.top = ev.Run
		if m.state {
			out = append(out, Event{Type: StateDelta, Delta: []patchOp{{Op: "replace", Path: "/switchboard/run", Value: ev.Run}}})
		}
	case agent.EventTurnStarted:
		m.turn = ev.Turn
		if m.state {
			out = append(out, Event{Type: StateDelta, Delta: []patchOp{{Op: "replace", Path: "/switchboard/turn", Value: ev.Turn}}})
		}
	case agent.EventModelTurn:
		out = m.closeText(out, "")
		if m.state && ev.Usage != nil {
			out = append(out, Event{Type: StateDelta, Delta: []patchOp{{Op: "add", Path: "/switchboard/usage", Value: ev.Usage}}})
		}
	case agent.EventFinal:
		out = m.closeText(out, "")
	default:
		out = m.common(out, ev, "")
	}
	return out
}

type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// common maps the events a run and a nested run share; sub is the
// subagent run id ("" for the top run).
func (m *Mapper) common(out []Event, ev agent.Event, sub string) []Event {
	switch ev.Type {
	case agent.EventModelText:
		if ev.Text == "" {
			return out
		}
		id, ok := m.open[sub]
		if !ok {
			id = m.id("msg")
			m.open[sub] = id
			out = append(out, Event{Type: TextMessageStart, MessageID: id, Role: "assistant", SubagentRunID: sub})
		}
		out = append(out, Event{Type: TextMessageContent, MessageID: id, Delta: ev.Text, SubagentRunID: sub})
	case agent.EventModelReasoning:
		if ev.Text == "" {
			return out
		}
		id := m.id("reasoning")
		out = append(out,
			Event{Type: ReasoningStart, MessageID: id, SubagentRunID: sub},
			Event{Type: ReasoningMessageStart, MessageID: id, Role: "reasoning", SubagentRunID: sub},
			Event{Type: ReasoningMessageContent, MessageID: id, Delta: ev.Text, SubagentRunID: sub},
			Event{Type: ReasoningMessageEnd, MessageID: id, SubagentRunID: sub},
			Event{Type: ReasoningEnd, MessageID: id, SubagentRunID: sub})
	case agent.EventModelTurn:
		out = m.closeText(out, sub)
	case agent.EventToolStarted:
		if ev.Call == nil {
			return out
		}
		out = m.closeText(out, sub)
		args := string(ev.Call.Args)
		if args == "" {
			args = "{}"
		}
		out = append(out,
			Event{Type: ToolCallStart, ToolCallID: ev.Call.ID, ToolCallName: ev.Call.Tool, SubagentRunID: sub},
			Event{Type: ToolCallArgs, ToolCallID: ev.Call.ID, Delta: args, SubagentRunID: sub},
			Event{Type: ToolCallEnd, ToolCallID: ev.Call.ID, SubagentRunID: sub})
	case agent.EventToolFinished:
		if ev.Call == nil || m.results[ev.Call.ID] {
			return out
		}
		m.results[ev.Call.ID] = true
		text := ""
		if ev.Result != nil {
			text = ev.Result.Text()
		}
		out = append(out, Event{Type: ToolCallResult, MessageID: m.id("result"), ToolCallID: ev.Call.ID,
			Content: &text, Role: "tool", SubagentRunID: sub})
	case agent.EventFailure:
		if ev.Call == nil || ev.Failure == nil || m.results[ev.Call.ID] {
			return out
		}
		m.results[ev.Call.ID] = true
		text := ev.Failure.Message
		out = append(out, Event{Type: ToolCallResult, MessageID: m.id("result"), ToolCallID: ev.Call.ID,
			Content: &text, Role: "tool", SubagentRunID: sub})
	case agent.EventStepStarted:
		if ev.Step == nil {
			return out
		}
		out = m.closeText(out, sub)
		m.steps = append(m.steps, openStep{ev.Step.Name, sub})
		out = append(out, Event{Type: StepStarted, StepName: ev.Step.Name, SubagentRunID: sub})
	case agent.EventStepFinished:
		if ev.Step == nil {
			return out
		}
		for i := len(m.steps) - 1; i >= 0; i-- {
			if m.steps[i] == (openStep{ev.Step.Name, sub}) {
				m.steps = append(m.steps[:i], m.steps[i+1:]...)
				out = append(out, Event{Type: StepFinished, StepName: ev.Step.Name, SubagentRunID: sub})
				break
			}
		}
	}
	return out
}

// nested maps an event of a run started inside the top run: its own
// run_started and end become SUBAGENT_STARTED and SUBAGENT_FINISHED (or
// SUBAGENT_ERROR); the rest is attributed to it by subagentRunId.
func (m *Mapper) nested(ev agent.Event) []Event {
	sub := ev.Run
	var out []Event
	switch ev.Type {
	case agent.EventRunStarted:
		name := ev.Agent
		if name == "" {
			name = sub
		}
		m.subagents = append(m.subagents, sub)
		e := Event{Type: SubagentStarted, SubagentRunID: sub, Name: name}
		if ev.Parent != nil {
			e.ParentToolID = ev.Parent.Call
		}
		out = append(out, e)
	case agent.EventFinal, agent.EventRunFailed:
		out = m.closeText(out, sub)
		if !m.dropSubagent(sub) {
			return out
		}
		if ev.Type == agent.EventFinal {
			out = append(out, Event{Type: SubagentFinished, SubagentRunID: sub, Outcome: &Outcome{Type: "success"}})
		} else {
			msg, code := "the nested run failed", ""
			if ev.Failure != nil {
				msg, code = ev.Failure.Message, ev.Failure.Kind.String()
			}
			out = append(out, Event{Type: SubagentError, SubagentRunID: sub, Message: msg, Code: code})
		}
	default:
		out = m.common(out, ev, sub)
	}
	return out
}

func (m *Mapper) dropSubagent(sub string) bool {
	for i, s := range m.subagents {
		if s == sub {
			m.subagents = append(m.subagents[:i], m.subagents[i+1:]...)
			return true
		}
	}
	return false
}

func (m *Mapper) closeText(out []Event, sub string) []Event {
	if id, ok := m.open[sub]; ok {
		delete(m.open, sub)
		out = append(out, Event{Type: TextMessageEnd, MessageID: id, SubagentRunID: sub})
	}
	return out
}

// closeAll closes every open message; with suspend, it also closes the
// open steps and subagents (they reopen on Start) for an interrupt.
func (m *Mapper) closeAll(out []Event, interruptIDs []string) []Event {
	for sub := range m.open {
		out = m.closeText(out, sub)
	}
	if interruptIDs == nil {
		return out
	}
	for i := len(m.steps) - 1; i >= 0; i-- {
		out = append(out, Event{Type: StepFinished, StepName: m.steps[i].name, SubagentRunID: m.steps[i].sub})
	}
	for i := len(m.subagents) - 1; i >= 0; i-- {
		out = append(out, Event{Type: SubagentFinished, SubagentRunID: m.subagents[i],
			Outcome: &Outcome{Type: "suspended", InterruptIDs: interruptIDs}})
	}
	return out
}

// Finish returns the events that end the run after the Switchboard run's
// last pair: RUN_FINISHED with the answer, or RUN_ERROR.
func (m *Mapper) Finish(ev agent.Event, err error) []Event {
	out := m.closeAll(nil, nil)
	if err != nil || ev.Type == agent.EventRunFailed {
		msg, code := "the run failed", ""
		if ev.Failure != nil {
			msg, code = ev.Failure.Message, ev.Failure.Kind.String()
		} else if err != nil {
			msg = err.Error()
		}
		return append(out, Event{Type: RunError, Message: msg, Code: code})
	}
	return append(out, Event{Type: RunFinished, ThreadID: m.threadID, RunID: m.runID, Result: ev.Text,
		Outcome: &Outcome{Type: "success"}})
}

// Interrupt returns the events that end the AG-UI run to ask: the open
// messages, steps and subagents closed, and RUN_FINISHED with the
// interrupt outcome.
func (m *Mapper) Interrupt(ins ...Interrupt) []Event {
	ids := make([]string, len(ins))
	for i, in := range ins {
		ids[i] = in.ID
	}
	out := m.closeAll(nil, ids)
	return append(out, Event{Type: RunFinished, ThreadID: m.threadID, RunID: m.runID,
		Outcome: &Outcome{Type: "interrupt", Interrupts: ins}})
}

// AwaitTools returns the events that end the AG-UI run while the calls
// ids of client tools wait for the application's results: the open
// messages, steps and subagents closed (they reopen on Start), and
// RUN_FINISHED whose success outcome names the calls pending.
func (m *Mapper) AwaitTools(ids ...string) []Event {
	out := m.closeAll(nil, []string{})
	return append(out, Event{Type: RunFinished, ThreadID: m.threadID, RunID: m.runID,
		Outcome: &Outcome{Type: "success", PendingToolCallIDs: ids}})
}

// interruptOf words an elicitation as an AG-UI interrupt.
func interruptOf(id string, e agent.Elicitation) Interrupt {
	in := Interrupt{ID: id, Reason: string(e.Kind), Message: e.Message, ToolCallID: e.Call}
	if e.Kind == agent.ElicitPermission {
		in.Reason = "tool_approval"
		if in.Message == "" {
			in.Message = fmt.Sprintf("Allow %s?", e.Tool)
		}
		in.ResponseSchema = json.RawMessage(`{"type":"object","properties":{"approved":{"type":"boolean"}},"required":["approved"]}`)
	} else if s := strings.TrimSpace(string(e.Schema)); strings.HasPrefix(s, "{") {
		in.ResponseSchema = json.RawMessage(s)
	}
	return in
}

// answerOf turns a resume entry into the answer of elicitation e. A
// permission is approved by payload true or {"approved": true}; an
// elicitation is accepted with an object payload as its content, and
// declined by {"action": "decline"}. A cancelled entry cancels.
func answerOf(e agent.Elicitation, r ResumeEntry) agent.ElicitationResult {
	if r.Status == ResumeCancelled {
		return agent.ElicitationResult{Action: agent.ElicitCancel, Reason: "cancelled by the AG-UI client"}
	}
	var b bool
	if json.Unmarshal(r.Payload, &b) == nil {
		if b {
			return agent.ElicitationResult{Action: agent.ElicitAccept}
		}
		return agent.ElicitationResult{Action: agent.ElicitDecline, Reason: "declined by the AG-UI client"}
	}
	var obj map[string]any
	_ = json.Unmarshal(r.Payload, &obj)
	if a, ok := obj["action"].(string); ok && (a == string(agent.ElicitDecline) || a == string(agent.ElicitCancel)) {
		return agent.ElicitationResult{Action: agent.ElicitAction(a), Reason: "declined by the AG-UI client"}
	}
	if e.Kind == agent.ElicitPermission {
		if ok, _ := obj["approved"].(bool); !ok {
			return agent.ElicitationResult{Action: agent.ElicitDecline, Reason: "not approved by the AG-UI client"}
		}
		return agent.ElicitationResult{Action: agent.ElicitAccept}
	}
	if c, ok := obj["content"].(map[string]any); ok {
		obj = c
	}
	return agent.ElicitationResult{Action: agent.ElicitAccept, Content: obj}
}
