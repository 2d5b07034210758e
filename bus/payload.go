package bus

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/failure"
)

// Version is the payload version this package writes and reads: every
// payload carries "v": 1. A payload with another version (or none) is a
// Protocol failure.
const Version = 1

// ProgressUpdate is a progress report on <prefix>.progress.<run>: of a tool
// call (Call) or a remote task (Token, as the source named it).
type ProgressUpdate struct {
	Run   string `json:"run"`
	Call  string `json:"call,omitempty"`
	Token string `json:"token,omitempty"`
	// Progress so far, in units of Total (or unitless when Total is 0).
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
}

// TaskUpdateKind says what an A2A task update carries.
type TaskUpdateKind string

// Task update kinds.
const (
	TaskStatus   TaskUpdateKind = "status"
	TaskArtifact TaskUpdateKind = "artifact"
)

// TaskUpdate is an A2A task's status or artifact update on
// <prefix>.a2a.tasks.<task>. Data carries the A2A event as the peer sent it.
type TaskUpdate struct {
	Task    string         `json:"task"`
	Context string         `json:"context,omitempty"`
	Kind    TaskUpdateKind `json:"kind"`
	// State is the task's state after a status update (A2A names, e.g.
	// "working", "input-required", "completed").
	State string `json:"state,omitempty"`
	// Final marks the task's last update.
	Final   bool            `json:"final,omitempty"`
	Message string          `json:"message,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
	Time    time.Time       `json:"time"`
}

// WireError is a typed failure carried in a reply.
type WireError struct {
	Kind      failure.Kind   `json:"kind"`
	Message   string         `json:"message"`
	Source    failure.Source `json:"source,omitempty"`
	Name      string         `json:"name,omitempty"`
	Retryable bool           `json:"retryable,omitempty"`
}

// toWire summarises a failure for the wire: its kind, source and
// model-safe message (never the raw cause).
func toWire(err error) *WireError {
	fe := failure.From(err)
	msg := fe.Message
	if msg == "" {
		msg = failure.ModelText(fe)
	}
	return &WireError{Kind: fe.Kind, Message: failure.Redact(msg), Source: fe.Source, Name: fe.Name, Retryable: fe.Retryable}
}

// NewWireError summarises a failure for a reply payload, as the bus's
// responders do: its kind, source, name and model-safe message (redacted,
// never the raw cause).
func NewWireError(err error) *WireError { return toWire(err) }

// Failure turns a wire error received in a reply back into a typed failure
// of Source bus (the responder's source is named in the cause), for op.
func (w *WireError) Failure(op string) *failure.Error { return w.failureOf(op) }

// remoteError is the cause of a failure a responder replied with.
var errRemote = errors.New("the responder replied with a failure")

// failureOf turns a wire error back into a failure.
func (w *WireError) failureOf(op string) *failure.Error {
	return &failure.Error{Kind: w.Kind, Source: failure.SourceBus, Name: w.Name, Op: op, Message: w.Message,
		Retryable: w.Retryable, Err: fmt.Errorf("%w (from %s)", errRemote, w.Source)}
}

type eventWire struct {
	V     int         `json:"v"`
	Event agent.Event `json:"event"`
}

type progressWire struct {
	V int `json:"v"`
	ProgressUpdate
}

type taskWire struct {
	V int `json:"v"`
	TaskUpdate
}

type requestWire[T any] struct {
	V int `json:"v"`
	// DeadlineMS is the requester's deadline in Unix milliseconds.
	DeadlineMS int64 `json:"deadline_ms,omitempty"`
	Request    T     `json:"request"`
}

type replyWire[T any] struct {
	V      int        `json:"v"`
	Result *T         `json:"result,omitempty"`
	Error  *WireError `json:"error,omitempty"`
}

type kvWire[T any] struct {
	V     int `json:"v"`
	Value T   `json:"value"`
}

func checkVersion(op string, v int) error {
	if v != Version {
		return protocolError(op, fmt.Errorf("%w: got v=%d, want v=%d", ErrVersion, v, Version))
	}
	return nil
}

// DecodeEvent decodes an events payload. A malformed payload or another
// version is a Protocol failure.
func DecodeEvent(data []byte) (agent.Event, error) {
	var w eventWire
	if err := json.Unmarshal(data, &w); err != nil {
		return agent.Event{}, protocolError("decode event", err)
	}
	if err := checkVersion("decode event", w.V); err != nil {
		return agent.Event{}, err
	}
	if w.Event.Type == "" {
		return agent.Event{}, protocolError("decode event", errors.New("event has no type"))
	}
	return w.Event, nil
}

// DecodeProgress decodes a progress payload.
func DecodeProgress(data []byte) (ProgressUpdate, error) {
	var w progressWire
	if err := json.Unmarshal(data, &w); err != nil {
		return ProgressUpdate{}, protocolError("decode progress", err)
	}
	if err := checkVersion("decode progress", w.V); err != nil {
		return ProgressUpdate{}, err
	}
	return w.ProgressUpdate, nil
}

// DecodeTaskUpdate decodes an A2A task update payload.
func DecodeTaskUpdate(data []byte) (TaskUpdate, error) {
	var w taskWire
	if err := json.Unmarshal(data, &w); err != nil {
		return TaskUpdate{}, protocolError("decode task update", err)
	}
	if err := checkVersion("decode task update", w.V); err != nil {
		return TaskUpdate{}, err
	}
	if w.Task == "" {
		return TaskUpdate{}, protocolError("decode task update", errors.New("task update has no task id"))
	}
	switch w.Kind {
	case TaskStatus, TaskArtifact:
	default:
		return TaskUpdate{}, protocolError("decode task update", fmt.Errorf("unknown kind %q", w.Kind))
	}
	return w.TaskUpdate, nil
}

// DecodeSamplingRequest decodes a sampling request payload and its
// deadline (zero when the requester sent none).
func DecodeSamplingRequest(data []byte) (agent.SamplingRequest, time.Time, error) {
	return decodeRequest[agent.SamplingRequest](data, "decode sampling request")
}

// DecodeElicitation decodes an elicitation request payload and its deadline.
func DecodeElicitation(data []byte) (agent.Elicitation, time.Time, error) {
	return decodeRequest[agent.Elicitation](data, "decode elicitation")
}

// EncodeElicitation encodes a question as the bus's elicitation request
// (the payload DecodeElicitation reads), with the asker's deadline (zero:
// none): for components that route questions over subjects of their own,
// such as bus/worker.
func EncodeElicitation(e agent.Elicitation, deadline time.Time) ([]byte, error) {
	w := requestWire[agent.Elicitation]{V: Version, Request: e}
	if !deadline.IsZero() {
		w.DeadlineMS = deadline.UnixMilli()
	}
	return json.Marshal(w)
}

// EncodeElicitationReply encodes an elicitation reply (the payload
// DecodeElicitationReply reads): the result, or err as a typed failure.
func EncodeElicitationReply(res agent.ElicitationResult, err error) ([]byte, error) {
	if err != nil {
		return json.Marshal(replyWire[agent.ElicitationResult]{V: Version, Error: toWire(err)})
	}
	return json.Marshal(replyWire[agent.ElicitationResult]{V: Version, Result: &res})
}

// DecodeSamplingReply decodes a sampling reply: the result, or the typed
// failure the responder sent.
func DecodeSamplingReply(data []byte) (agent.SamplingResult, error) {
	return decodeReply[agent.SamplingResult](data, "decode sampling reply")
}

// DecodeElicitationReply decodes an elicitation reply.
func DecodeElicitationReply(data []byte) (agent.ElicitationResult, error) {
	r, err := decodeReply[agent.ElicitationResult](data, "decode elicitation reply")
	if err != nil {
		return r, err
	}
	switch r.Action {
	case agent.ElicitAccept, agent.ElicitDecline, agent.ElicitCancel:
		return r, nil
	}
	return agent.ElicitationResult{}, protocolError("decode elicitation reply", fmt.Errorf("unknown action %q", r.Action))
}

func decodeRequest[T any](data []byte, op string) (T, time.Time, error) {
	var w requestWire[T]
	var zero T
	if err := json.Unmarshal(data, &w); err != nil {
		return zero, time.Time{}, protocolError(op, err)
	}
	if err := checkVersion(op, w.V); err != nil {
		return zero, time.Time{}, err
	}
	var deadline time.Time
	if w.DeadlineMS > 0 {
		deadline = time.UnixMilli(w.DeadlineMS)
	}
	return w.Request, deadline, nil
}

func decodeReply[T any](data []byte, op string) (T, error) {
	var w replyWire[T]
	var zero T
	if err := json.Unmarshal(data, &w); err != nil {
		return zero, protocolError(op, err)
	}
	if err := checkVersion(op, w.V); err != nil {
		return zero, err
	}
	switch {
	case w.Error != nil:
		return zero, w.Error.failureOf(op)
	case w.Result == nil:
		return zero, protocolError(op, errors.New("reply has neither result nor error"))
	}
	return *w.Result, nil
}
