// Package taskwire holds the wire types of the MCP tasks extension
// (io.modelcontextprotocol/tasks, SEP-2663, for protocol 2026-07-28): the
// Task a server answers a tools/call with (resultType "task"), the
// tasks/get, tasks/update and tasks/cancel methods, and the checks of a
// task that comes from outside. It is shared by the client (package mcp)
// and the server (package mcp/server). go-sdk v1.8.0 implements none of
// it (go-sdk#626).
package taskwire

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Extension is the extension's identifier in the capabilities.
const Extension = "io.modelcontextprotocol/tasks"

// The extension's methods.
const (
	MethodGet    = "tasks/get"
	MethodUpdate = "tasks/update"
	MethodCancel = "tasks/cancel"
)

// The result types: a task handle in place of a result, and the standard
// result of the tasks/* methods.
const (
	ResultTask     = "task"
	ResultComplete = "complete"
)

// CodeMissingCapability is the JSON-RPC error of a request that needs a
// client capability the client did not declare (-32021).
const CodeMissingCapability = -32021

// metaClientCapabilities is the _meta key of a 2026-07-28 request's
// client capabilities.
const metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"

// Status is a task's status.
type Status string

// The statuses; Completed, Failed and Cancelled are terminal.
const (
	Working       Status = "working"
	InputRequired Status = "input_required"
	Completed     Status = "completed"
	Failed        Status = "failed"
	Cancelled     Status = "cancelled"
)

// Terminal reports whether the status never changes again.
func (s Status) Terminal() bool { return s == Completed || s == Failed || s == Cancelled }

// Task is a task as the wire carries it (a DetailedTask: the fields of
// its status inlined).
type Task struct {
	TaskID        string `json:"taskId"`
	Status        Status `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	// CreatedAt and LastUpdatedAt are ISO 8601 timestamps.
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	// TTLMs is the time to live from creation in milliseconds (nil:
	// unlimited, written as null).
	TTLMs *int64 `json:"ttlMs"`
	// PollIntervalMs is the suggested polling interval in milliseconds.
	PollIntervalMs *int64 `json:"pollIntervalMs,omitempty"`
	// InputRequests are the outstanding server-to-client requests of an
	// input_required task, by a key unique over the task's life.
	InputRequests map[string]InputRequest `json:"inputRequests,omitempty"`
	// Result is a completed task's result (a CallToolResult for tools/call).
	Result json.RawMessage `json:"result,omitempty"`
	// Error is a failed task's JSON-RPC error.
	Error *RPCError `json:"error,omitempty"`
}

// InputRequest is one server-to-client request of an input_required task:
// elicitation/create, sampling/createMessage or roots/list.
type InputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// TaskParams are the parameters of tasks/get and tasks/cancel.
type TaskParams struct {
	gomcp.ParamsBase
	TaskID string `json:"taskId"`
}

// UpdateParams are the parameters of tasks/update: the answers to
// outstanding input requests, by their keys.
type UpdateParams struct {
	gomcp.ParamsBase
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
}

// TaskResult is a CreateTaskResult (ResultType "task") or a GetTaskResult
// (ResultType "complete"): a result with the task's fields inlined.
type TaskResult struct {
	gomcp.ResultBase
	ResultType string `json:"resultType"`
	Task
}

// AckResult is the empty acknowledgement of tasks/update and tasks/cancel.
type AckResult struct {
	gomcp.ResultBase
	ResultType string `json:"resultType"`
}

// Limits on a task from outside.
const (
	maxTaskID        = 512
	maxInputRequests = 64
	maxKey           = 256
	maxMessage       = 4096
)

// Parse decodes a task from outside and checks it (Check).
func Parse(data []byte) (*Task, error) {
	var t Task
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("the task is not a valid JSON object: %w", err)
	}
	if err := t.Check(); err != nil {
		return nil, err
	}
	return &t, nil
}

// ErrInvalid is the error of a task that breaks the extension's rules.
var ErrInvalid = errors.New("invalid task")

// Check reports what is wrong with a task from outside: an id that is
// missing, too long or not printable UTF-8; an unknown status; a status
// without its field (input_required without inputRequests, completed
// without a result object, failed without an error); negative durations.
func (t *Task) Check() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, a...))
	}
	if !printable(t.TaskID, maxTaskID) {
		return bad("taskId must be a non-empty printable string of at most %d bytes", maxTaskID)
	}
	if len(t.StatusMessage) > maxMessage*4 || !utf8.ValidString(t.StatusMessage) {
		return bad("statusMessage must be UTF-8 of at most %d bytes", maxMessage*4)
	}
	if t.TTLMs != nil && *t.TTLMs < 0 || t.PollIntervalMs != nil && *t.PollIntervalMs < 0 {
		return bad("ttlMs and pollIntervalMs must not be negative")
	}
	switch t.Status {
	case Working, Cancelled:
	case InputRequired:
		if len(t.InputRequests) == 0 {
			return bad("an input_required task must carry inputRequests")
		}
		if len(t.InputRequests) > maxInputRequests {
			return bad("%d input requests, more than %d", len(t.InputRequests), maxInputRequests)
		}
		for k, r := range t.InputRequests {
			if !printable(k, maxKey) {
				return bad("an inputRequests key must be a non-empty printable string of at most %d bytes", maxKey)
			}
			switch r.Method {
			case "elicitation/create", "sampling/createMessage", "roots/list":
			default:
				return bad("input request %q has the method %q; want elicitation/create, sampling/createMessage or roots/list", k, r.Method)
			}
		}
	case Completed:
		if len(t.Result) == 0 || t.Result[0] != '{' {
			return bad("a completed task must carry its result as an object")
		}
	case Failed:
		if t.Error == nil {
			return bad("a failed task must carry its JSON-RPC error")
		}
	default:
		return bad("unknown status %q", t.Status)
	}
	return nil
}

func printable(s string, max int) bool {
	if s == "" || len(s) > max || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// The bounds of a polling interval, and the interval of a task that
// suggests none.
const (
	MinPoll     = 50 * time.Millisecond
	MaxPoll     = 30 * time.Second
	DefaultPoll = time.Second
)

// Interval is how long to wait before polling t again: its
// pollIntervalMs within [MinPoll, MaxPoll], DefaultPoll without one.
func (t *Task) Interval() time.Duration {
	if t.PollIntervalMs == nil {
		return DefaultPoll
	}
	d := time.Duration(*t.PollIntervalMs) * time.Millisecond
	if *t.PollIntervalMs > int64(MaxPoll/time.Millisecond) {
		d = MaxPoll
	}
	return min(max(d, MinPoll), MaxPoll)
}

// Expires is when the task may be discarded (its creation plus its TTL),
// and false without a TTL or a readable creation time.
func (t *Task) Expires() (time.Time, bool) {
	if t.TTLMs == nil {
		return time.Time{}, false
	}
	c, err := time.Parse(time.RFC3339Nano, t.CreatedAt)
	if err != nil {
		return time.Time{}, false
	}
	return c.Add(time.Duration(min(*t.TTLMs, int64(1<<62)/int64(time.Millisecond))) * time.Millisecond), true
}

// Declared reports whether a request's _meta declares the extension in
// its client capabilities (2026-07-28), or, for a session of an earlier
// revision, whether caps (the session's initialize capabilities) do.
func Declared(meta map[string]any, caps *gomcp.ClientCapabilities) bool {
	if v, ok := meta[metaClientCapabilities]; ok {
		b, err := json.Marshal(v)
		if err != nil {
			return false
		}
		var c struct {
			Extensions map[string]json.RawMessage `json:"extensions"`
		}
		if json.Unmarshal(b, &c) != nil {
			return false
		}
		_, ok := c.Extensions[Extension]
		return ok
	}
	if caps != nil {
		_, ok := caps.Extensions[Extension]
		return ok
	}
	return false
}

// Stamp is t's ISO 8601 form on the wire.
func Stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// Task status notifications (SEP-2663 over SEP-2575's subscriptions/listen):
// a client opens a listen whose notifications filter names task ids; the
// server acknowledges the ids it agreed to (notifications/subscriptions/
// acknowledged), then sends notifications/tasks, each the full task as
// tasks/get would answer it, on the listen's stream.
const (
	MethodListen      = "subscriptions/listen"
	NotificationTasks = "notifications/tasks"
	NotificationAck   = "notifications/subscriptions/acknowledged"
)

// maxListenIDs bounds the task ids of one listen's acknowledgement that
// are read.
const maxListenIDs = 1024

// ListenParams are the parameters of a subscriptions/listen for task
// status notifications.
type ListenParams struct {
	gomcp.ParamsBase
	Notifications TaskSubscriptions `json:"notifications"`
}

// TaskSubscriptions is the tasks extension's part of a listen's
// notifications filter, and of its acknowledgement.
type TaskSubscriptions struct {
	TaskIDs []string `json:"taskIds,omitempty"`
}

// ParseNotification decodes the parameters of a notifications/tasks
// from outside and checks the task they carry (Check).
func ParseNotification(params []byte) (*Task, error) {
	return Parse(params)
}

// ParseAck returns the task ids a notifications/subscriptions/acknowledged
// says the server agreed to notify (nil: none, or not readable); ids that
// are not valid task ids, and those past maxListenIDs, are left out.
func ParseAck(params []byte) []string {
	var p struct {
		Notifications struct {
			TaskIDs []json.RawMessage `json:"taskIds"`
		} `json:"notifications"`
	}
	if json.Unmarshal(params, &p) != nil {
		return nil
	}
	var ids []string
	for _, raw := range p.Notifications.TaskIDs {
		var id string
		if len(ids) >= maxListenIDs || json.Unmarshal(raw, &id) != nil || !printable(id, maxTaskID) {
			continue
		}
		ids = append(ids, id)
	}
	return ids
}
