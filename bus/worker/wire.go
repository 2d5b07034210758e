package worker

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/failure"
	"github.com/switchboard-dev/switchboard/bus"
)

// The payloads of a pool's subjects. Every payload is a JSON object with
// "v": bus.Version (1); a reader refuses other versions with a Protocol
// failure wrapping bus.ErrVersion, and ignores fields it does not know.

// StartRequest asks a worker to run one input: the payload of
// <prefix>.work.<name> (request-reply, queue group).
type StartRequest struct {
	// Job is the id the pool chose for this attempt; it names the job's
	// subjects.
	Job string `json:"job"`
	// Input is the run's input.
	Input string `json:"input"`
	// DeadlineMS is the caller's deadline in Unix milliseconds (0: none);
	// the worker's run ends then, with a Timeout failure.
	DeadlineMS int64 `json:"deadline_ms,omitempty"`
	// HeartbeatMS is the interval, in milliseconds, at which both sides
	// beat; Missed is how many silent intervals mean the other side is gone.
	HeartbeatMS int64 `json:"heartbeat_ms,omitempty"`
	Missed      int   `json:"missed,omitempty"`
	// Parent is the caller's place (its run and tool call or workflow
	// step): the remote run's events carry it.
	Parent *agent.Parent `json:"parent,omitempty"`
}

// Refusal says why a worker did not take a job; the pool offers it to
// another worker.
type Refusal string

// Refusals.
const (
	// RefusedBusy: the worker runs MaxConcurrent jobs already.
	RefusedBusy Refusal = "busy"
	// RefusedStopping: the worker is stopping.
	RefusedStopping Refusal = "stopping"
)

// Ack is a worker's answer to a StartRequest: it took the job (Worker and
// Job are set), refused it (Refused), or failed (Error: a malformed
// request).
type Ack struct {
	Worker  string         `json:"worker,omitempty"`
	Job     string         `json:"job,omitempty"`
	Refused Refusal        `json:"refused,omitempty"`
	Error   *bus.WireError `json:"error,omitempty"`
}

// MessageType says what a JobMessage carries.
type MessageType string

// Job message types.
const (
	// MessageEvent carries one event of the remote run.
	MessageEvent MessageType = "event"
	// MessageHeartbeat says the worker is alive.
	MessageHeartbeat MessageType = "heartbeat"
)

// JobMessage is what a worker publishes about a job on
// <prefix>.work.<name>.job.<job>.out: the remote run's events, in order,
// and heartbeats. Seq numbers every message of the job from 1, so the
// pool detects lost and repeated ones.
type JobMessage struct {
	Seq   int64        `json:"seq"`
	Type  MessageType  `json:"type"`
	Event *agent.Event `json:"event,omitempty"`
	// Handover marks the EventRunFailed of a run the worker gave up
	// because it is stopping: the pool runs the input again elsewhere.
	Handover bool `json:"handover,omitempty"`
}

// ControlOp says what a Control message asks.
type ControlOp string

// Control operations.
const (
	// ControlPing says the caller is alive.
	ControlPing ControlOp = "ping"
	// ControlCancel cancels the job's run.
	ControlCancel ControlOp = "cancel"
)

// Control is what the pool publishes about a job on
// <prefix>.work.<name>.job.<job>.ctl.
type Control struct {
	Op ControlOp `json:"op"`
	// Kind is the failure the cancelled run ends with (canceled or timeout).
	Kind failure.Kind `json:"kind,omitempty"`
	// Reason words the cancellation, model-safe.
	Reason string `json:"reason,omitempty"`
}

// WorkerInfo is a worker's answer on <prefix>.work.<name>.info.
type WorkerInfo struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	Running       int    `json:"running"`
	MaxConcurrent int    `json:"max_concurrent"`
	Stopping      bool   `json:"stopping,omitempty"`
}

type startWire struct {
	V int `json:"v"`
	StartRequest
}

type ackWire struct {
	V int `json:"v"`
	Ack
}

type jobWire struct {
	V int `json:"v"`
	JobMessage
}

type controlWire struct {
	V int `json:"v"`
	Control
}

type infoWire struct {
	V int `json:"v"`
	WorkerInfo
}

// protocolError is a malformed or wrong-version payload.
func protocolError(op string, err error) *failure.Error {
	return &failure.Error{Kind: failure.Protocol, Source: failure.SourceBus, Op: op, Err: err,
		Message: "a worker payload was malformed or of an unsupported version"}
}

func decode[T any](data []byte, op string, v *int, into *T) error {
	if err := json.Unmarshal(data, into); err != nil {
		return protocolError(op, err)
	}
	if *v != bus.Version {
		return protocolError(op, fmt.Errorf("%w: got v=%d, want v=%d", bus.ErrVersion, *v, bus.Version))
	}
	return nil
}

// DecodeStart decodes a start request. A malformed payload, another
// version, or a request without a job id is a Protocol failure.
func DecodeStart(data []byte) (StartRequest, error) {
	var w startWire
	if err := decode(data, "decode start request", &w.V, &w); err != nil {
		return StartRequest{}, err
	}
	switch {
	case w.Job == "":
		return StartRequest{}, protocolError("decode start request", errors.New("the request has no job id"))
	case w.HeartbeatMS < 0 || w.Missed < 0 || w.DeadlineMS < 0:
		return StartRequest{}, protocolError("decode start request", errors.New("negative deadline or heartbeat"))
	}
	return w.StartRequest, nil
}

// DecodeAck decodes a worker's answer to a start request. An ack that
// neither takes the job (worker and job set) nor refuses it nor carries an
// error, or that names an unknown refusal, is a Protocol failure.
func DecodeAck(data []byte) (Ack, error) {
	var w ackWire
	if err := decode(data, "decode ack", &w.V, &w); err != nil {
		return Ack{}, err
	}
	switch w.Refused {
	case "", RefusedBusy, RefusedStopping:
	default:
		return Ack{}, protocolError("decode ack", fmt.Errorf("unknown refusal %q", w.Refused))
	}
	if w.Refused == "" && w.Error == nil && (w.Worker == "" || w.Job == "") {
		return Ack{}, protocolError("decode ack", errors.New("the ack names no worker or job"))
	}
	return w.Ack, nil
}

// DecodeJobMessage decodes a job message: a positive seq, a known type,
// and an event (with a type) for MessageEvent.
func DecodeJobMessage(data []byte) (JobMessage, error) {
	var w jobWire
	if err := decode(data, "decode job message", &w.V, &w); err != nil {
		return JobMessage{}, err
	}
	if w.Seq <= 0 {
		return JobMessage{}, protocolError("decode job message", fmt.Errorf("seq %d is not positive", w.Seq))
	}
	switch w.Type {
	case MessageHeartbeat:
	case MessageEvent:
		if w.Event == nil || w.Event.Type == "" {
			return JobMessage{}, protocolError("decode job message", errors.New("an event message has no event"))
		}
	default:
		return JobMessage{}, protocolError("decode job message", fmt.Errorf("unknown type %q", w.Type))
	}
	return w.JobMessage, nil
}

// DecodeControl decodes a control message.
func DecodeControl(data []byte) (Control, error) {
	var w controlWire
	if err := decode(data, "decode control", &w.V, &w); err != nil {
		return Control{}, err
	}
	switch w.Op {
	case ControlPing, ControlCancel:
	default:
		return Control{}, protocolError("decode control", fmt.Errorf("unknown op %q", w.Op))
	}
	return w.Control, nil
}

// DecodeWorkerInfo decodes a worker's info answer.
func DecodeWorkerInfo(data []byte) (WorkerInfo, error) {
	var w infoWire
	if err := decode(data, "decode worker info", &w.V, &w); err != nil {
		return WorkerInfo{}, err
	}
	if w.ID == "" {
		return WorkerInfo{}, protocolError("decode worker info", errors.New("the worker has no id"))
	}
	return w.WorkerInfo, nil
}

// deadlineMS encodes a deadline (zero: none).
func deadlineMS(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// mustJSON encodes a payload whose types always encode.
func mustJSON(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("worker: a payload did not encode: %v", err))
	}
	return data
}
