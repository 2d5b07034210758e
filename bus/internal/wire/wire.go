// Package wire holds the versioned JSON payloads shared by bus and
// bus/worker: the payload version, subject tokens, typed failures carried in
// replies, and the request and reply envelopes of the bus's request-reply
// subjects. Their schemas are documented in docs/bus.md; users never see
// these types.
package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/redact"
)

// Version is the payload version written and read: every payload carries
// "v": 1. A payload with another version (or none) is a Protocol failure.
const Version = 1

// ErrVersion is the cause of a Protocol failure for a payload whose "v" is
// not a version this package reads. bus re-exports it as bus.ErrVersion.
var ErrVersion = errors.New("bus: unsupported payload version")

// ProtocolError is the failure for a malformed payload.
func ProtocolError(op string, err error) *failure.Error {
	return &failure.Error{Kind: failure.Protocol, Source: failure.SourceBus, Op: op, Err: err,
		Message: "a bus payload was malformed or of an unsupported version"}
}

// CheckVersion refuses a payload version other than Version.
func CheckVersion(op string, v int) error {
	if v != Version {
		return ProtocolError(op, fmt.Errorf("%w: got v=%d, want v=%d", ErrVersion, v, Version))
	}
	return nil
}

// WireError is a typed failure carried in a reply.
type WireError struct {
	Kind      failure.Kind   `json:"kind"`
	Message   string         `json:"message"`
	Source    failure.Source `json:"source,omitempty"`
	Name      string         `json:"name,omitempty"`
	Retryable bool           `json:"retryable,omitempty"`
}

// NewWireError summarises a failure for the wire: its kind, source, name and
// model-safe message (redacted, never the raw cause).
func NewWireError(err error) *WireError {
	fe := failure.From(err)
	msg := fe.Message
	if msg == "" {
		msg = fe.ModelText()
	}
	return &WireError{Kind: fe.Kind, Message: redact.Redact(msg), Source: fe.Source, Name: fe.Name, Retryable: fe.Retryable}
}

// errRemote is the cause of a failure a responder replied with.
var errRemote = errors.New("the responder replied with a failure")

// Failure turns a wire error received in a reply back into a typed failure
// of Source bus (the responder's source is named in the cause), for op.
func (w *WireError) Failure(op string) *failure.Error {
	return &failure.Error{Kind: w.Kind, Source: failure.SourceBus, Name: w.Name, Op: op, Message: w.Message,
		Retryable: w.Retryable, Err: fmt.Errorf("%w (from %s)", errRemote, w.Source)}
}

// Request is the envelope of a request: the caller's deadline travels with it.
type Request[T any] struct {
	V int `json:"v"`
	// DeadlineMS is the caller's deadline in Unix milliseconds (0: none).
	DeadlineMS int64 `json:"deadline_ms,omitempty"`
	Request    T     `json:"request"`
}

// Reply is the envelope of a reply: a result or a typed failure.
type Reply[T any] struct {
	V      int        `json:"v"`
	Result *T         `json:"result,omitempty"`
	Error  *WireError `json:"error,omitempty"`
}

// EncodeRequest encodes a request with its deadline (zero: none).
func EncodeRequest[T any](req T, deadline time.Time) ([]byte, error) {
	w := Request[T]{V: Version, Request: req}
	if !deadline.IsZero() {
		w.DeadlineMS = deadline.UnixMilli()
	}
	return json.Marshal(w)
}

// DecodeRequest decodes a request and its deadline (zero: none).
func DecodeRequest[T any](data []byte, op string) (T, time.Time, error) {
	var w Request[T]
	var zero T
	if err := json.Unmarshal(data, &w); err != nil {
		return zero, time.Time{}, ProtocolError(op, err)
	}
	if err := CheckVersion(op, w.V); err != nil {
		return zero, time.Time{}, err
	}
	var deadline time.Time
	if w.DeadlineMS > 0 {
		deadline = time.UnixMilli(w.DeadlineMS)
	}
	return w.Request, deadline, nil
}

// EncodeReply encodes a result, or err as a typed failure when it is not nil.
func EncodeReply[T any](res T, err error) ([]byte, error) {
	if err != nil {
		return json.Marshal(Reply[T]{V: Version, Error: NewWireError(err)})
	}
	return json.Marshal(Reply[T]{V: Version, Result: &res})
}

// DecodeReply decodes a reply: its result, or the failure it carries.
func DecodeReply[T any](data []byte, op string) (T, error) {
	var w Reply[T]
	var zero T
	if err := json.Unmarshal(data, &w); err != nil {
		return zero, ProtocolError(op, err)
	}
	if err := CheckVersion(op, w.V); err != nil {
		return zero, err
	}
	switch {
	case w.Error != nil:
		return zero, w.Error.Failure(op)
	case w.Result == nil:
		return zero, ProtocolError(op, errors.New("reply has neither result nor error"))
	}
	return *w.Result, nil
}

// DecodeElicitationReply decodes the reply to an elicitation, refusing an
// unknown action.
func DecodeElicitationReply(data []byte) (agent.ElicitationResult, error) {
	r, err := DecodeReply[agent.ElicitationResult](data, "decode elicitation reply")
	if err != nil {
		return r, err
	}
	switch r.Action {
	case agent.ElicitAccept, agent.ElicitDecline, agent.ElicitCancel:
		return r, nil
	}
	return agent.ElicitationResult{}, ProtocolError("decode elicitation reply", fmt.Errorf("unknown action %q", r.Action))
}
