package bus

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus/internal/wire"
	"github.com/switchboard-dev/switchboard/bus/task"
)

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

// wireError is a typed failure carried in a reply.
type wireError = wire.WireError

// toWire summarises a failure for the wire.
func toWire(err error) *wireError { return wire.NewWireError(err) }

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
	task.Update
}

// requestWire and replyWire are the envelopes of request-reply subjects.
type (
	requestWire[T any] = wire.Request[T]
	replyWire[T any]   = wire.Reply[T]
)

// version is the payload version every payload carries.
const version = wire.Version

func checkVersion(op string, v int) error { return wire.CheckVersion(op, v) }

// decodeEvent decodes a run event published on <prefix>.events.<run>.
func decodeEvent(data []byte) (agent.Event, error) {
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

// decodeProgress decodes a progress update.
func decodeProgress(data []byte) (ProgressUpdate, error) {
	var w progressWire
	if err := json.Unmarshal(data, &w); err != nil {
		return ProgressUpdate{}, protocolError("decode progress", err)
	}
	if err := checkVersion("decode progress", w.V); err != nil {
		return ProgressUpdate{}, err
	}
	return w.ProgressUpdate, nil
}

// decodeTaskUpdate decodes an A2A task update.
func decodeTaskUpdate(data []byte) (task.Update, error) {
	var w taskWire
	if err := json.Unmarshal(data, &w); err != nil {
		return task.Update{}, protocolError("decode task update", err)
	}
	if err := checkVersion("decode task update", w.V); err != nil {
		return task.Update{}, err
	}
	if w.Task == "" {
		return task.Update{}, protocolError("decode task update", errors.New("task update has no task id"))
	}
	switch w.Kind {
	case "status", "artifact":
	default:
		return task.Update{}, protocolError("decode task update", fmt.Errorf("unknown kind %q", w.Kind))
	}
	return w.Update, nil
}

// decodeSamplingRequest decodes a sampling request and its deadline.
func decodeSamplingRequest(data []byte) (agent.SamplingRequest, time.Time, error) {
	return wire.DecodeRequest[agent.SamplingRequest](data, "decode sampling request")
}

// decodeElicitation decodes an elicitation and its deadline.
func decodeElicitation(data []byte) (agent.Elicitation, time.Time, error) {
	return wire.DecodeRequest[agent.Elicitation](data, "decode elicitation")
}

// decodeSamplingReply decodes the reply to a sampling request.
func decodeSamplingReply(data []byte) (agent.SamplingResult, error) {
	return wire.DecodeReply[agent.SamplingResult](data, "decode sampling reply")
}

// decodeElicitationReply decodes the reply to an elicitation.
func decodeElicitationReply(data []byte) (agent.ElicitationResult, error) {
	return wire.DecodeElicitationReply(data)
}
