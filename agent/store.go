package agent

import (
	"context"
	"encoding/json"
	"time"

	"github.com/switchboard-dev/switchboard/llm"
)

// recordVersion is the version of the record types below, written in their
// V field. A store refuses nothing by version; the agent refuses records of
// a newer version than it knows.
const recordVersion = 1

// RunState is the state of a durable run, as its [Checkpoint] records it.
// An agent writes the states; a [Store] keeps them as they are (it may
// treat the checkpoints of ended runs differently, keep them for less
// time), and a worker that resumes orphaned runs reads them.
type RunState string

// The states of a durable run.
const (
	// RunRunning: the run is going on (or its process died: see
	// [Checkpoint.Owner]).
	RunRunning RunState = "running"
	// RunParked: the run waits on [Checkpoint.Questions]; answering them
	// resumes it.
	RunParked RunState = "parked"
	// RunDone: the run ended with [Checkpoint.Answer].
	RunDone RunState = "done"
	// RunFailed: the run ended with the failure of kind [Checkpoint.Error].
	RunFailed RunState = "failed"
)

// SessionStore keeps an agent's sessions: the conversations any process
// whose agent shares the store continues ([Durability].Sessions). Every
// method is safe for concurrent use, by goroutines and by processes sharing
// the store.
//
// Errors are *failure.Error: NotFound for a missing (or expired) record,
// Conflict for a stale revision or a record that exists already, Budget for
// a record over the store's limits, InvalidArgs for a malformed one.
// Revisions start at 1; an expected revision of 0 means "must not exist".
// The agent/agenttest package's RunSessionSuite is the conformance suite.
type SessionStore interface {
	// LoadSession returns the session id.
	LoadSession(ctx context.Context, id string) (*SessionRecord, error)
	// PutSession replaces (or, with expect 0, creates) the session rec.ID if
	// its revision is expect, and returns the new revision.
	PutSession(ctx context.Context, rec *SessionRecord, expect uint64) (uint64, error)
	// AppendSession changes the session delta.ID if its revision is expect:
	// delta.History is appended to the history, delta.Grants are added to
	// the grants, Run is set to delta.Run, and TTL to delta.TTL when it is
	// not zero. It returns the new revision.
	AppendSession(ctx context.Context, delta *SessionRecord, expect uint64) (uint64, error)
	// ListSessions returns the ids of the sessions that have not expired.
	ListSessions(ctx context.Context) ([]string, error)
	// DeleteSession removes a session; deleting a missing one is no error.
	DeleteSession(ctx context.Context, id string) error
}

// RunStore keeps an agent's runs: the latest checkpoint of each, and the
// intents and results of its side-effecting tool calls, so that a run
// continues in another process ([Durability].Runs). Concurrency, errors
// and revisions are as for [SessionStore]; the agent/agenttest package's
// RunRunSuite is the conformance suite.
type RunStore interface {
	// LoadCheckpoint returns the latest checkpoint of run.
	LoadCheckpoint(ctx context.Context, run string) (*Checkpoint, error)
	// SaveCheckpoint replaces (or, with expect 0, creates) the checkpoint of
	// cp.Run if its revision is expect, and returns the new revision. Only
	// the latest checkpoint of a run is kept.
	SaveCheckpoint(ctx context.Context, cp *Checkpoint, expect uint64) (uint64, error)
	// ListRuns returns the ids of the runs that have a checkpoint.
	ListRuns(ctx context.Context) ([]string, error)
	// DeleteRun removes the checkpoint and the call records of run.
	DeleteRun(ctx context.Context, run string) error

	// PutIntent records that the call c.Call of run c.Run is about to run.
	// It fails with Conflict if that call has a record already: a call is
	// started at most once.
	PutIntent(ctx context.Context, c *CallRecord) error
	// PutCallResult records c.Result for a call that has an intent. It fails
	// with NotFound without an intent and Conflict if a result is recorded.
	PutCallResult(ctx context.Context, c *CallRecord) error
	// PutCallHandle records c.Handle for a call that has an intent and no
	// result yet, replacing the handle it had. It fails with NotFound
	// without an intent and Conflict if a result is recorded.
	PutCallHandle(ctx context.Context, c *CallRecord) error
	// LoadCalls returns the call records of run, in the order of their
	// intents.
	LoadCalls(ctx context.Context, run string) ([]CallRecord, error)
}

// Inbox keeps the questions for people that parked runs wait on
// ([Durability].Inbox). Concurrency and errors are as for [SessionStore];
// the agent/agenttest package's RunInboxSuite is the conformance suite.
type Inbox interface {
	// PutQuestion records a new question (Conflict if q.ID exists).
	PutQuestion(ctx context.Context, q *Question) error
	// LoadQuestion returns the question id, answered or not.
	LoadQuestion(ctx context.Context, id string) (*Question, error)
	// AnswerQuestion records the answer to a pending question and returns
	// the question with it. It fails with Conflict if the question has an
	// answer already and with Timeout if its deadline has passed.
	AnswerQuestion(ctx context.Context, id string, answer ElicitationResult) (*Question, error)
	// PendingQuestions returns the questions without an answer whose
	// deadline has not passed, oldest first: the inbox.
	PendingQuestions(ctx context.Context) ([]Question, error)
	// DeleteQuestion removes a question; deleting a missing one is no error.
	DeleteQuestion(ctx context.Context, id string) error
}

// Store is a store of all three concerns: sessions, runs and questions.
// [NewMemoryStore] is one for one process (and for tests); the bus/store
// package provides one on JetStream, shared by replicas. [Durable] makes
// the [Durability] that keeps everything in one.
type Store interface {
	SessionStore
	RunStore
	Inbox
}

// SessionRecord is a stored conversation.
type SessionRecord struct {
	// V is the record's format version (1).
	V int `json:"v"`
	// ID names the session.
	ID string `json:"id"`
	// Revision is set by the store: it counts the session's writes.
	Revision uint64 `json:"revision,omitempty"`
	// Run is the run that holds the session ("" when none does): a new run
	// of the session waits until it has ended, or resumes it.
	Run string `json:"run,omitempty"`
	// History is the conversation. Every tool call in it has exactly one
	// result.
	History []llm.Message `json:"history,omitempty"`
	// Grants are the tool patterns pre-approved in the session.
	Grants []string `json:"grants,omitempty"`
	// TTL is how long the session lives after its last write (0: the
	// store's default).
	TTL time.Duration `json:"ttl,omitempty"`
	// Created and Updated are set by the store; Expires is Updated + TTL.
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	Expires time.Time `json:"expires"`
}

// Checkpoint is the state of a run after its last model turn or tool
// result: enough to continue the run in another process.
type Checkpoint struct {
	// V is the record's format version (1).
	V int `json:"v"`
	// Run is the run's id; Revision is set by the store.
	Run      string `json:"run"`
	Revision uint64 `json:"revision,omitempty"`
	// Session is the session the run belongs to, and SessionRevision the
	// revision at which the run took it.
	Session         string `json:"session"`
	SessionRevision uint64 `json:"session_revision"`
	// Agent is the name of the agent that runs it (checked on resume).
	Agent string `json:"agent"`
	// Owner identifies the process attempt that wrote the checkpoint: a
	// resume takes the run over by writing its own.
	Owner string `json:"owner"`
	// State is where the run is: running, parked, done or failed.
	State RunState `json:"state"`
	// Input is the run's input; Base is the length of the session's history
	// when the run started; Messages are the messages the run added since
	// (the input first).
	Input    string        `json:"input"`
	Base     int           `json:"base"`
	Messages []llm.Message `json:"messages"`
	// Results are the results so far of the last assistant message's tool
	// calls, when that message has no tool message after it yet.
	Results []llm.ToolResult `json:"results,omitempty"`
	// Turn is the number of model turns done.
	Turn int `json:"turn"`
	// Usage, Cost, ToolCalls and Failures are the run's counters so far.
	Usage     llm.Usage `json:"usage"`
	Cost      llm.Cost  `json:"cost"`
	ToolCalls int       `json:"tool_calls,omitempty"`
	Failures  int       `json:"failures,omitempty"`
	// Grants are the tool patterns the run pre-approved so far (the
	// session's and those granted during the run).
	Grants []string `json:"grants,omitempty"`
	// Guarded are the guards tools put over other tools in the session so
	// far (Call.GuardTools), resolved again when the run resumes.
	Guarded []GuardedTools `json:"guarded,omitempty"`
	// Question is the question a parked run waits on (the first of
	// Questions).
	Question string `json:"question,omitempty"`
	// Questions are all the questions a parked run waits on, one per tool
	// call that asked.
	Questions []string `json:"questions,omitempty"`
	// Answer is the outcome of a finished run; Error the failure kind of a
	// failed one.
	Answer *Answer `json:"answer,omitempty"`
	Error  string  `json:"error,omitempty"`
	// Output is the answer shape the run's Input asked for in place of the
	// agent's Config.Output (nil: none), kept for a resumed run.
	Output *llm.Output `json:"output,omitempty"`
	// Trace is the W3C traceparent of the run's span when the checkpoint
	// was written ("" without tracing): a resumed run's span links to it.
	Trace string `json:"trace,omitempty"`
	// Started is when the run began; Updated when this checkpoint was
	// written.
	Started time.Time `json:"started"`
	Updated time.Time `json:"updated"`
}

// CallRecord is the intent, and later the result, of a tool call that is
// not read-only.
type CallRecord struct {
	// V is the record's format version (1).
	V int `json:"v"`
	// Run and Call identify the call; Call is its idempotency key.
	Run  string `json:"run"`
	Call string `json:"call"`
	// Tool and Args are what was called.
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args,omitempty"`
	// Idempotent records the tool's hint when the intent was written.
	Idempotent bool `json:"idempotent,omitempty"`
	// Started is when the intent was written.
	Started time.Time `json:"started"`
	// Handle names the call's work at its far side while it goes on (an
	// MCP task), recorded by the tool through [Call.SaveHandle]: a run
	// resumed before the call's result is recorded calls the tool again
	// with it ([Call.Handle]) rather than holding the call in doubt.
	Handle json.RawMessage `json:"handle,omitempty"`
	// Result is the call's result (nil while the call is in flight, or in
	// doubt); Finished when it was recorded.
	Result   *llm.ToolResult `json:"result,omitempty"`
	Finished time.Time       `json:"finished,omitzero"`
}

// Question is a question for a person that a parked run waits on: the
// entry of the inbox.
type Question struct {
	// V is the record's format version (1).
	V int `json:"v"`
	// ID names the question (the answer names it).
	ID string `json:"id"`
	// Agent, Session and Run place the question; Elicitation is what is
	// asked (its Call is the tool call it is about).
	Agent       string      `json:"agent"`
	Session     string      `json:"session"`
	Run         string      `json:"run"`
	Elicitation Elicitation `json:"elicitation"`
	// Created is when the run parked; Deadline when the question expires:
	// the run then resumes with a Timeout.
	Created  time.Time `json:"created"`
	Deadline time.Time `json:"deadline"`
	// Answer is the person's answer (nil while pending), recorded at
	// Answered.
	Answer   *ElicitationResult `json:"answer,omitempty"`
	Answered time.Time          `json:"answered,omitzero"`
}
