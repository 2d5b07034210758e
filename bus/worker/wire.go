package worker

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus/internal/wire"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// The payloads of a pool's subjects. Every payload is a JSON object with
// "v": wire.Version (1); a reader refuses other versions with a Protocol
// failure wrapping wire.ErrVersion, and ignores fields it does not know.

// startRequest asks a worker to run one input: the payload of
// <prefix>.work.<name> (request-reply, queue group).
type startRequest struct {
	// Job is the id the pool chose for this attempt; it names the job's
	// subjects.
	Job string `json:"job"`
	// Input is the run's input.
	Input string `json:"input"`
	// Parts are the media of the run's input (agent.Input.Parts of the
	// caller's context), which the worker passes on with agent.WithInput:
	// base64 in JSON, so the whole request must fit the connection's
	// maximum payload (a larger one is refused with InvalidArgs; send
	// large media by URL).
	Parts []llm.Part `json:"parts,omitempty"`
	// Instructions and Conversation are agent.Input's of the caller's
	// context (its Tools, functions of the caller's process, stay there).
	Instructions string `json:"instructions,omitempty"`
	Conversation string `json:"conversation,omitempty"`
	// Resume, on a retry after a lost worker, is the id of the remote run
	// that worker started: a runner with durable runs (an agent with a
	// store) resumes it from its checkpoint instead of running Input again.
	Resume string `json:"resume,omitempty"`
	// Lost is the worker the pool lost the run on (with Resume): a durable
	// worker resumes at once a run that worker owns, and waits while
	// another live worker runs it.
	Lost string `json:"lost,omitempty"`
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

// refusal says why a worker did not take a job; the pool offers it to
// another worker.
type refusal string

// Refusals.
const (
	// refusedBusy: the worker runs MaxConcurrent jobs already.
	refusedBusy refusal = "busy"
	// refusedStopping: the worker is stopping.
	refusedStopping refusal = "stopping"
)

// ack is a worker's answer to a StartRequest: it took the job (Worker and
// Job are set), refused it (Refused), or failed (Error: a malformed
// request).
type ack struct {
	Worker  string          `json:"worker,omitempty"`
	Job     string          `json:"job,omitempty"`
	Refused refusal         `json:"refused,omitempty"`
	Error   *wire.WireError `json:"error,omitempty"`
}

// messageType says what a JobMessage carries.
type messageType string

// Job message types.
const (
	// messageEvent carries one event of the remote run.
	messageEvent messageType = "event"
	// messageHeartbeat says the worker is alive.
	messageHeartbeat messageType = "heartbeat"
)

// jobMessage is what a worker publishes about a job on
// <prefix>.work.<name>.job.<job>.out: the remote run's events, in order,
// and heartbeats. Seq numbers every message of the job from 1, so the
// pool detects lost and repeated ones.
type jobMessage struct {
	Seq   int64        `json:"seq"`
	Type  messageType  `json:"type"`
	Event *agent.Event `json:"event,omitempty"`
	// Handover marks the EventRunFailed of a run the worker gave up
	// because it is stopping: the pool runs the input again elsewhere.
	Handover bool `json:"handover,omitempty"`
}

// controlOp says what a Control message asks.
type controlOp string

// Control operations.
const (
	// controlPing says the caller is alive.
	controlPing controlOp = "ping"
	// controlCancel cancels the job's run.
	controlCancel controlOp = "cancel"
)

// control is what the pool publishes about a job on
// <prefix>.work.<name>.job.<job>.ctl.
type control struct {
	Op controlOp `json:"op"`
	// Kind is the failure the cancelled run ends with (canceled or timeout).
	Kind failure.Kind `json:"kind,omitempty"`
	// Reason words the cancellation, model-safe.
	Reason string `json:"reason,omitempty"`
	// Handover marks the cancel of a pool that lost contact with the
	// worker and resumes the run elsewhere: a durable run stops without
	// recording an end, so the resume continues it.
	Handover bool `json:"handover,omitempty"`
}

// Info is a worker's description, as Pool.Workers returns it (its answer
// on <prefix>.work.<name>.info).
type Info struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	Running       int    `json:"running"`
	MaxConcurrent int    `json:"max_concurrent"`
	Stopping      bool   `json:"stopping,omitempty"`
}

type startWire struct {
	V int `json:"v"`
	startRequest
}

type ackWire struct {
	V int `json:"v"`
	ack
}

type jobWire struct {
	V int `json:"v"`
	jobMessage
}

type controlWire struct {
	V int `json:"v"`
	control
}

type infoWire struct {
	V int `json:"v"`
	Info
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
	if *v != wire.Version {
		return protocolError(op, fmt.Errorf("%w: got v=%d, want v=%d", wire.ErrVersion, *v, wire.Version))
	}
	return nil
}

// decodeStart decodes a start request. A malformed payload, another
// version, or a request without a job id is a Protocol failure.
func decodeStart(data []byte) (startRequest, error) {
	var w startWire
	if err := decode(data, "decode start request", &w.V, &w); err != nil {
		return startRequest{}, err
	}
	switch {
	case w.Job == "":
		return startRequest{}, protocolError("decode start request", errors.New("the request has no job id"))
	case w.HeartbeatMS < 0 || w.Missed < 0 || w.DeadlineMS < 0:
		return startRequest{}, protocolError("decode start request", errors.New("negative deadline or heartbeat"))
	}
	return w.startRequest, nil
}

// decodeAck decodes a worker's answer to a start request. An ack that
// neither takes the job (worker and job set) nor refuses it nor carries an
// error, or that names an unknown refusal, is a Protocol failure.
func decodeAck(data []byte) (ack, error) {
	var w ackWire
	if err := decode(data, "decode ack", &w.V, &w); err != nil {
		return ack{}, err
	}
	switch w.Refused {
	case "", refusedBusy, refusedStopping:
	default:
		return ack{}, protocolError("decode ack", fmt.Errorf("unknown refusal %q", w.Refused))
	}
	if w.Refused == "" && w.Error == nil && (w.Worker == "" || w.Job == "") {
		return ack{}, protocolError("decode ack", errors.New("the ack names no worker or job"))
	}
	return w.ack, nil
}

// decodeJobMessage decodes a job message: a positive seq, a known type,
// and an event (with a type) for MessageEvent.
func decodeJobMessage(data []byte) (jobMessage, error) {
	var w jobWire
	if err := decode(data, "decode job message", &w.V, &w); err != nil {
		return jobMessage{}, err
	}
	if w.Seq <= 0 {
		return jobMessage{}, protocolError("decode job message", fmt.Errorf("seq %d is not positive", w.Seq))
	}
	switch w.Type {
	case messageHeartbeat:
	case messageEvent:
		if w.Event == nil || w.Event.Type == "" {
			return jobMessage{}, protocolError("decode job message", errors.New("an event message has no event"))
		}
	default:
		return jobMessage{}, protocolError("decode job message", fmt.Errorf("unknown type %q", w.Type))
	}
	return w.jobMessage, nil
}

// decodeControl decodes a control message.
func decodeControl(data []byte) (control, error) {
	var w controlWire
	if err := decode(data, "decode control", &w.V, &w); err != nil {
		return control{}, err
	}
	switch w.Op {
	case controlPing, controlCancel:
	default:
		return control{}, protocolError("decode control", fmt.Errorf("unknown op %q", w.Op))
	}
	return w.control, nil
}

// decodeWorkerInfo decodes a worker's info answer.
func decodeWorkerInfo(data []byte) (Info, error) {
	var w infoWire
	if err := decode(data, "decode worker info", &w.V, &w); err != nil {
		return Info{}, err
	}
	if w.ID == "" {
		return Info{}, protocolError("decode worker info", errors.New("the worker has no id"))
	}
	return w.Info, nil
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
