package agui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/switchboard-dev/switchboard/failure"
)

// RunAgentInput is the body an AG-UI client POSTs to start a run (or to
// resume one: Resume answers the interrupts of the run it continues).
type RunAgentInput struct {
	ThreadID        string          `json:"threadId"`
	RunID           string          `json:"runId"`
	ProtocolVersion string          `json:"protocolVersion,omitempty"`
	ParentRunID     string          `json:"parentRunId,omitempty"`
	State           json.RawMessage `json:"state,omitempty"`
	Messages        []Message       `json:"messages"`
	Tools           []Tool          `json:"tools,omitempty"`
	Context         []ContextItem   `json:"context,omitempty"`
	ForwardedProps  json.RawMessage `json:"forwardedProps,omitempty"`
	Resume          []ResumeEntry   `json:"resume,omitempty"`
}

// Message is one message of an AG-UI conversation. Content is a string or
// an array of content parts; Text returns its text. An assistant message
// carries the calls it made in ToolCalls; a tool message answers the call
// ToolCallID, with Error set when the tool failed.
type Message struct {
	ID         string          `json:"id"`
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content,omitempty"`
	Name       string          `json:"name,omitempty"`
	ToolCalls  []ToolCall      `json:"toolCalls,omitempty"`
	ToolCallID string          `json:"toolCallId,omitempty"`
	Error      string          `json:"error,omitempty"`
}

// ToolCall is a call an assistant message made: Function names the tool
// and holds its arguments as JSON text.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall is the tool and the arguments of a ToolCall.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Tool is a tool the client offers and runs (a frontend tool): the model
// is offered it beside the Runner's own tools, and a run that calls it
// ends awaiting the client's result (see Handler).
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// ContextItem is ambient information given to the run.
type ContextItem struct {
	Description string `json:"description"`
	Value       string `json:"value"`
}

// ResumeEntry answers one interrupt of the run being continued.
type ResumeEntry struct {
	InterruptID string          `json:"interruptId"`
	Status      string          `json:"status"`
	Payload     json.RawMessage `json:"payload,omitempty"`
}

// Resume statuses.
const (
	ResumeResolved  = "resolved"
	ResumeCancelled = "cancelled"
)

// Text returns the message's text: its string content, or the text of its
// text parts joined by newlines.
func (m Message) Text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(m.Content, &parts)
	var b bytes.Buffer
	for _, p := range parts {
		if p.Type == "text" {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// DecodeInput reads one RunAgentInput of at most limit bytes from r. A
// malformed input is an InvalidArgs failure whose message names the field
// that was wrong.
func DecodeInput(r io.Reader, limit int64) (*RunAgentInput, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, bad("reading the body: %v", err)
	}
	if int64(len(data)) > limit {
		return nil, bad("the body is larger than %d bytes", limit)
	}
	var in RunAgentInput
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&in); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, bad("field %q: want %s, got JSON %s", te.Field, te.Type, te.Value)
		}
		return nil, bad("the body is not a RunAgentInput JSON object: %v", err)
	}
	if dec.More() {
		return nil, bad("the body holds more than one JSON value")
	}
	if err := in.validate(data); err != nil {
		return nil, err
	}
	return &in, nil
}

func (in *RunAgentInput) validate(data []byte) error {
	var top map[string]json.RawMessage
	_ = json.Unmarshal(data, &top)
	for _, f := range []string{"threadId", "runId", "messages"} {
		if v, ok := top[f]; !ok || string(v) == "null" {
			return bad("field %q is required", f)
		}
	}
	if in.ThreadID == "" {
		return bad("field %q is empty", "threadId")
	}
	if in.RunID == "" {
		return bad("field %q is empty", "runId")
	}
	for i, m := range in.Messages {
		if m.ID == "" {
			return bad("field \"messages[%d].id\" is required", i)
		}
		switch m.Role {
		case "developer", "system", "assistant", "user", "tool", "activity", "reasoning":
		default:
			return bad("field \"messages[%d].role\": %q is not an AG-UI role", i, m.Role)
		}
		if m.Role == "tool" && m.ToolCallID == "" {
			return bad("field \"messages[%d].toolCallId\" is required on a tool message", i)
		}
		for j, c := range m.ToolCalls {
			if c.ID == "" {
				return bad("field \"messages[%d].toolCalls[%d].id\" is required", i, j)
			}
			if c.Function.Name == "" {
				return bad("field \"messages[%d].toolCalls[%d].function.name\" is required", i, j)
			}
		}
	}
	names := map[string]bool{}
	for i, t := range in.Tools {
		if t.Name == "" {
			return bad("field \"tools[%d].name\" is required", i)
		}
		if names[t.Name] {
			return bad("field \"tools[%d].name\": %q names two tools", i, t.Name)
		}
		names[t.Name] = true
		if p := bytes.TrimSpace(t.Parameters); len(p) > 0 && string(p) != "null" && p[0] != '{' {
			return bad("field \"tools[%d].parameters\" is not a JSON Schema object", i)
		}
	}
	for i, e := range in.Resume {
		if e.InterruptID == "" {
			return bad("field \"resume[%d].interruptId\" is required", i)
		}
		if e.Status != ResumeResolved && e.Status != ResumeCancelled {
			return bad("field \"resume[%d].status\": %q is neither %q nor %q", i, e.Status, ResumeResolved, ResumeCancelled)
		}
	}
	return nil
}

func bad(format string, args ...any) error {
	return failure.New(failure.InvalidArgs, failure.SourceAgent, "AG-UI input: "+fmt.Sprintf(format, args...))
}
