// Package failure is Switchboard's single failure taxonomy.
//
// Every failure from every source (a model provider, an MCP server, an A2A
// peer, a skill, the NATS bus, a local tool) is represented as an *Error with
// a Kind, the Source it came from, the Name of the server, peer or tool, and
// whether retrying may help. One Policy decides what happens to each of
// them: the process default ([Default], replaced with [SetDefault]) unless a
// component's Config names another. Set it once at start-up, as with
// slog.SetDefault:
//
//	failure.SetDefault(failure.NewPolicy(failure.PolicyConfig{Logger: &log, OnFailure: report}))
//
// Kinds are comparable with errors.Is:
//
//	if errors.Is(err, failure.Timeout) { ... }
//
// and the details are reachable with errors.As:
//
//	var fe *failure.Error
//	if errors.As(err, &fe) { log(fe.Source, fe.Name) }
package failure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
)

// Kind classifies a failure. A Kind is itself an error, so that
// errors.Is(err, failure.Timeout) reports whether err is a timeout.
type Kind int

// The failure kinds. The zero value is Unknown.
const (
	// Unknown is an unclassified failure; it is treated like Internal.
	Unknown Kind = iota
	// Transient is a transport failure that may succeed on retry:
	// connection reset, HTTP 5xx or 429, a NATS timeout.
	Transient
	// Unavailable means the source is known to be down: its circuit is open,
	// or it is not connected.
	Unavailable
	// InvalidArgs means the arguments of a call did not match its schema, or
	// were not a JSON object.
	InvalidArgs
	// UnknownTool means the model called a tool that does not exist.
	UnknownTool
	// ToolError means the tool ran and reported an error (MCP isError).
	ToolError
	// PermissionDenied means the permission policy refused the call.
	PermissionDenied
	// Declined means a person declined or cancelled a question
	// (elicitation, permission ask, A2A input).
	Declined
	// Timeout means a deadline passed.
	Timeout
	// Canceled means the caller cancelled.
	Canceled
	// Budget means a run budget (turns, tool calls, tokens, time) ran out.
	Budget
	// Panic means code panicked; the panic was recovered.
	Panic
	// Protocol means a peer broke its protocol: a malformed or
	// wrong-version reply, garbage on the wire.
	Protocol
	// Model means the model provider refused or failed in a way retrying
	// will not fix (bad request, authentication), or the model's answer was
	// unusable.
	Model
	// Config means the configuration is invalid.
	Config
	// Internal is a bug or an unexpected failure inside Switchboard.
	Internal
	// Rejected means a remote task was rejected, failed or was canceled by
	// the remote agent.
	Rejected
	// NotFound means what the call named does not exist: a key, a remote
	// task, a resource.
	NotFound
	// Conflict means the call lost a race with another writer: the key
	// exists already, or its revision is stale.
	Conflict
	// InDoubt means a side-effecting call was started but its outcome was
	// never recorded (the process running it stopped): whether it took
	// effect is unknown, and it is not run again.
	InDoubt
	// Parked means a run stopped to wait for a person's answer; it is
	// stored and resumes when the answer comes (see agent.Durability).
	Parked
	// Guardrail means a guard (agent.Guard) tripped: the run's input, a
	// tool call, a tool result or the answer was blocked. Name is the
	// guard's name and Message says why.
	Guardrail
)

var kindNames = [...]string{
	Unknown:          "unknown",
	Transient:        "transient",
	Unavailable:      "unavailable",
	InvalidArgs:      "invalid_arguments",
	UnknownTool:      "unknown_tool",
	ToolError:        "tool_error",
	PermissionDenied: "permission_denied",
	Declined:         "declined",
	Timeout:          "timeout",
	Canceled:         "canceled",
	Budget:           "budget_exceeded",
	Panic:            "panic",
	Protocol:         "protocol",
	Model:            "model",
	Config:           "config",
	Internal:         "internal",
	Rejected:         "rejected",
	NotFound:         "not_found",
	Conflict:         "conflict",
	InDoubt:          "in_doubt",
	Parked:           "parked",
	Guardrail:        "guardrail",
}

// String returns the kind's stable snake_case name, as used in logs, events
// and bus payloads.
func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Error implements error so that a Kind can be the target of errors.Is.
func (k Kind) Error() string { return k.String() }

// MarshalText encodes the kind as its name.
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText decodes a kind name; unknown names decode as Unknown.
func (k *Kind) UnmarshalText(b []byte) error {
	for i, n := range kindNames {
		if n == string(b) {
			*k = Kind(i)
			return nil
		}
	}
	*k = Unknown
	return nil
}

// Retryable reports whether failures of this kind are retried by default.
func (k Kind) Retryable() bool { return k == Transient }

// Source names where a failure came from. It is also the kind of a tool's
// provenance (agent.Provenance.Kind): where the tool comes from is where its
// failures come from.
type Source string

// Well-known sources.
const (
	SourceAgent Source = "agent"
	SourceTool  Source = "tool" // a tool of Go code in the process
	SourceModel Source = "llm"
	SourceMCP   Source = "mcp"
	SourceA2A   Source = "a2a"
	SourceSkill Source = "skills"
	SourceBus   Source = "bus"
	// SourceHandoff is the kind of a handoff tool's provenance: the tool
	// that hands the conversation to another agent.
	SourceHandoff Source = "handoff"
)

// Error is a classified failure.
type Error struct {
	// Kind classifies the failure.
	Kind Kind
	// Source is the subsystem the failure came from.
	Source Source
	// Name is the server, peer, skill or provider within Source, if any.
	Name string
	// Tool is the tool (as the model knows it) involved, if any.
	Tool string
	// Op is the operation that failed ("call", "connect", "sample", ...).
	Op string
	// Retryable overrides Kind.Retryable when set by the classifier.
	Retryable bool
	// Message is a short description safe to show to the model and to a
	// person: it must never contain secrets. When empty, the policy words
	// one from the kind.
	Message string
	// Err is the underlying cause; it may hold details not fit for the model.
	Err error

	// retried marks a failure a policy has already retried to exhaustion,
	// so that an outer Execute (the agent's, around a tool whose source ran
	// its own) does not multiply the attempts.
	retried bool
	// counted records the breaker (policy and key) that counted this
	// failure, so that an outer Execute of the same policy and key (the
	// agent's, around a tool whose source ran its own) does not count it a
	// second time and open the circuit early.
	counted *countMark
}

// countMark names a breaker: a policy and a key.
type countMark struct {
	p   *defaultPolicy
	key Key
}

// Retried reports whether a policy already spent its retries on this
// failure; Execute does not retry it again.
func (e *Error) Retried() bool { return e.retried }

// MarkRetried returns a copy of e marked as already retried, so that no
// Execute retries it again: for failures rebuilt from elsewhere (a remote
// run's, decoded from the bus) that a policy there already handled.
func (e *Error) MarkRetried() *Error {
	c := *e
	c.retried = true
	return &c
}

// New returns an *Error of the given kind with a model-safe message.
func New(kind Kind, src Source, msg string) *Error {
	return &Error{Kind: kind, Source: src, Message: msg, Retryable: kind.Retryable()}
}

// Wrap classifies err and returns it as an *Error of the given kind from
// src. If err is already an *Error it is returned with missing fields filled
// in, never re-kinded.
func Wrap(kind Kind, src Source, err error) *Error {
	var fe *Error
	if errors.As(err, &fe) {
		c := *fe
		if c.Source == "" {
			c.Source = src
		}
		return &c
	}
	return &Error{Kind: kind, Source: src, Err: err, Retryable: kind.Retryable()}
}

// Error describes the failure for logs.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Source != "" {
		b.WriteString(string(e.Source))
		if e.Name != "" {
			b.WriteByte('/')
			b.WriteString(e.Name)
		}
		b.WriteString(": ")
	}
	if e.Op != "" {
		b.WriteString(e.Op)
		b.WriteString(": ")
	}
	if e.Tool != "" {
		b.WriteString("tool ")
		b.WriteString(e.Tool)
		b.WriteString(": ")
	}
	b.WriteString(e.Kind.String())
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is this error's Kind.
func (e *Error) Is(target error) bool {
	k, ok := target.(Kind)
	return ok && k == e.Kind
}

// KindOf returns the Kind of err: the kind of the first *Error in its chain,
// or the kind From would classify it as.
func KindOf(err error) Kind {
	if err == nil {
		return Unknown
	}
	return From(err).Kind
}

// From classifies any error. An *Error in the chain is returned as is;
// context errors become Timeout or Canceled; network errors, EOF and
// connection resets become Transient; a recovered panic stays Panic;
// anything else is Unknown.
func From(err error) *Error {
	if err == nil {
		return nil
	}
	var fe *Error
	if errors.As(err, &fe) {
		return fe
	}
	var k Kind
	if errors.As(err, &k) {
		return &Error{Kind: k, Err: err, Retryable: k.Retryable()}
	}
	kind := Unknown
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		kind = Timeout
	case errors.Is(err, context.Canceled):
		kind = Canceled
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.EPIPE), errors.Is(err, net.ErrClosed):
		kind = Transient
	default:
		var ne net.Error
		if errors.As(err, &ne) {
			if ne.Timeout() {
				kind = Timeout
			} else {
				kind = Transient
			}
		}
	}
	return &Error{Kind: kind, Err: err, Retryable: kind.Retryable()}
}

// PanicError is the cause of a Panic failure: the recovered value and the
// stack of the goroutine that panicked.
type PanicError struct {
	Value any
	Stack []byte
}

// Error describes the panic.
func (p *PanicError) Error() string { return fmt.Sprintf("panic: %v", p.Value) }

// KindOfStatus classifies the HTTP status code of a failed response, for
// tools and providers that call HTTP APIs: 429 and 5xx are [Transient]; 408
// is [Timeout]; 401 and 403 are [PermissionDenied]; other 4xx are
// [Protocol] (the request was wrong); anything else is [Unknown].
func KindOfStatus(code int) Kind {
	switch {
	case code == http.StatusTooManyRequests, code >= 500 && code <= 599:
		return Transient
	case code == http.StatusRequestTimeout:
		return Timeout
	case code == http.StatusUnauthorized, code == http.StatusForbidden:
		return PermissionDenied
	case code >= 400 && code <= 499:
		return Protocol
	}
	return Unknown
}
