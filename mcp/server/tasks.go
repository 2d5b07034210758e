package server

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/mcp/internal/taskwire"
)

// MCP tasks (io.modelcontextprotocol/tasks, SEP-2663): with Config.Tasks,
// a tools/call of a served Runner from a client that declared the
// extension is answered at once with a task (resultType "task") while the
// run goes on; the client polls tasks/get, answers the run's questions
// through tasks/update and may cancel it with tasks/cancel.
//
// go-sdk v1.8.0 has no task result for tools/call (its handler must
// return a *CallToolResult): a receiving middleware answers such calls
// itself (taskMiddleware), and tasks/get, tasks/update and tasks/cancel
// are go-sdk custom methods (AddReceivingCustomMethod).
//
// A task is recorded in the RunStore before its handle is answered: its
// intent (a call record of run "mcp-task:<id>" whose Handle is the task's
// state, renewed each taskLease while it runs) and, when it ends, its
// final state as the call's result. So a task that ended is answered from
// the store by any replica and after a restart, a live task by any
// replica from its last renewal (tasks/update and tasks/cancel of a live
// task reach only the process that runs it: replicas route them by the
// Mcp-Name header, the task's id), and a task not renewed for staleLease
// as failed: its process stopped.

const (
	// taskPoll is the polling interval suggested to clients by default
	// (Config.TaskPoll).
	taskPoll = 500 * time.Millisecond
	// taskTTL is how long a task is kept from its creation (the store's
	// own retention, bus/store's RunTTL, may be shorter).
	taskTTL = 24 * time.Hour
	// taskLease is how often a live task renews its record; a recorded
	// task not renewed for staleLease, and live in no process that shares
	// the store, is answered as failed (its process stopped).
	taskLease  = 5 * time.Second
	staleLease = 4 * taskLease
	// maxLiveTasks bounds the tasks running at once; past it calls are
	// served without a task.
	maxLiveTasks = 1000
)

// taskState is a task's record in the store (its call record's Handle,
// then its Result's Content once it ended): the task as tasks/get answers
// it and the client it belongs to.
type taskState struct {
	Task  taskwire.Task `json:"task"`
	Owner string        `json:"owner,omitempty"`
}

// liveTask is a task whose run goes on in this process.
type liveTask struct {
	s      *Server
	cancel context.CancelCauseFunc
	mu     sync.Mutex
	state  taskState
	// asks are the outstanding input requests, by key.
	asks map[string]*taskAsk
	seq  int
	// subs are the listens for the task's status notifications
	// (tasklisten.go), each woken at a change of its status.
	subs map[chan struct{}]struct{}
}

type taskAsk struct {
	req    taskwire.InputRequest
	answer chan json.RawMessage
}

// errTaskCancelled is the cause of a task's run cancelled by tasks/cancel.
var errTaskCancelled = errors.New("the client cancelled the task")

// taskRun is the run id under which task id is recorded.
func taskRun(id string) string { return "mcp-task:" + id }

// taskOwner is who may see a task: the token's subject, else anyone who
// knows its id (128 random bits; SEP-2663 lets a task id be a bearer
// token), so that a client that reconnects on a new session can poll.
func taskOwner(extra *gomcp.RequestExtra) string {
	if extra != nil && extra.TokenInfo != nil && extra.TokenInfo.UserID != "" {
		return "sub:" + extra.TokenInfo.UserID
	}
	return ""
}

// ownerKey is the context key of the owner of a tasks/* request, put by
// taskMiddleware: go-sdk hands a custom method's handler no RequestExtra.
type ownerKey struct{}

func ownerFrom(ctx context.Context) string {
	o, _ := ctx.Value(ownerKey{}).(string)
	return o
}

// declaredTasks reports whether the request's client declared the tasks
// extension (in the request's _meta, or at initialize before 2026-07-28).
func declaredTasks(ss *gomcp.ServerSession, meta map[string]any) bool {
	var caps *gomcp.ClientCapabilities
	if ss != nil {
		if ip := ss.InitializeParams(); ip != nil {
			caps = ip.Capabilities
		}
	}
	return taskwire.Declared(meta, caps)
}

// offerTasks declares the extension and adds its methods.
func (s *Server) offerTasks(opts *gomcp.ServerOptions) {
	ownCapabilities(opts).AddExtension(taskwire.Extension, nil)
}

// addTaskMethods registers tasks/get, tasks/update and tasks/cancel.
func (s *Server) addTaskMethods() error {
	if err := gomcp.AddReceivingCustomMethod(s.mcp, taskwire.MethodGet, s.getTask); err != nil {
		return err
	}
	if err := gomcp.AddReceivingCustomMethod(s.mcp, taskwire.MethodUpdate, s.updateTask); err != nil {
		return err
	}
	return gomcp.AddReceivingCustomMethod(s.mcp, taskwire.MethodCancel, s.cancelTask)
}

// taskMiddleware answers a tools/call of a served Runner with a task when
// its client declared the extension.
func (s *Server) taskMiddleware(next gomcp.MethodHandler) gomcp.MethodHandler {
	return func(ctx context.Context, method string, req gomcp.Request) (gomcp.Result, error) {
		switch method {
		case taskwire.MethodGet, taskwire.MethodUpdate, taskwire.MethodCancel:
			return next(context.WithValue(ctx, ownerKey{}, taskOwner(req.GetExtra())), method, req)
		case "tools/call":
		default:
			return next(ctx, method, req)
		}
		cr, ok := req.(*gomcp.CallToolRequest)
		if !ok || cr.Params == nil || cr.Params.RequestState != "" || !s.runnerTools[cr.Params.Name] ||
			!declaredTasks(cr.Session, cr.Params.Meta) || s.nlive.Load() >= maxLiveTasks {
			return next(ctx, method, req)
		}
		return s.startTask(ctx, cr)
	}
}

// startTask records a new task, starts its run and answers its handle.
func (s *Server) startTask(ctx context.Context, req *gomcp.CallToolRequest) (gomcp.Result, error) {
	if err := ctx.Err(); err != nil {
		// The client gave up the call already: no task nobody follows.
		return nil, err
	}
	now := time.Now()
	id := "task-" + rand.Text()
	pollEvery := taskPoll
	if s.cfg.TaskPoll > 0 {
		pollEvery = s.cfg.TaskPoll
	}
	ttl, poll := int64(taskTTL/time.Millisecond), int64(pollEvery/time.Millisecond)
	lt := &liveTask{s: s, asks: map[string]*taskAsk{}, state: taskState{Owner: taskOwner(req.Extra), Task: taskwire.Task{
		TaskID: id, Status: taskwire.Working, CreatedAt: taskwire.Stamp(now), LastUpdatedAt: taskwire.Stamp(now),
		TTLMs: &ttl, PollIntervalMs: &poll}}}
	handle, _ := json.Marshal(lt.state)
	sctx, stop := context.WithTimeout(context.WithoutCancel(ctx), storeWait)
	err := s.cfg.Tasks.PutIntent(sctx, &agent.CallRecord{Run: taskRun(id), Call: id, Tool: req.Params.Name, Handle: handle})
	stop()
	if err != nil {
		s.log.Warn().Err(err).Msg("the task could not be recorded")
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the task could not be recorded: " + failure.From(err).ModelText()}
	}
	bctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	halt := context.AfterFunc(s.ctx, func() { cancel(context.Canceled) })
	lt.cancel = cancel
	s.tasks.Store(id, lt)
	s.nlive.Add(1)
	first := lt.state.Task // before the run can change it
	link := &clientLink{ss: req.Session, ask: lt.ask}
	if ip := req.Session.InitializeParams(); ip != nil {
		link.caps = ip.Capabilities
	}
	s.wg.Go(func() {
		defer halt()
		defer cancel(nil)
		renewed := make(chan struct{})
		go func() { // owned by the task's goroutine: it waits for it
			defer close(renewed)
			lt.renew(bctx)
		}()
		res := s.serveAudited(bctx, req, req.Params.Name, link)
		cause := context.Cause(bctx)
		cancel(nil)
		<-renewed
		lt.finish(bctx, cause, res)
		s.tasks.Delete(id)
		s.nlive.Add(-1)
	})
	return &taskwire.TaskResult{ResultType: taskwire.ResultTask, Task: first}, nil
}

// storeWait bounds a task's store operations.
const storeWait = 10 * time.Second

// ask puts an input request to the client through the task and waits for
// the answer tasks/update brings.
func (lt *liveTask) ask(ctx context.Context, r gomcp.InputRequest) (gomcp.InputResponse, error) {
	var method string
	var answer gomcp.InputResponse
	switch r.(type) {
	case *gomcp.ElicitParams:
		method, answer = "elicitation/create", &gomcp.ElicitResult{}
	case *gomcp.CreateMessageParams:
		method, answer = "sampling/createMessage", &gomcp.CreateMessageResult{}
	default:
		return nil, fmt.Errorf("unsupported request %T", r)
	}
	params, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	a := &taskAsk{req: taskwire.InputRequest{Method: method, Params: params}, answer: make(chan json.RawMessage, 1)}
	lt.mu.Lock()
	lt.seq++
	key := "q" + strconv.Itoa(lt.seq)
	lt.asks[key] = a
	lt.setStatusLocked(taskwire.InputRequired)
	lt.mu.Unlock()
	defer func() {
		lt.mu.Lock()
		delete(lt.asks, key)
		if len(lt.asks) == 0 && lt.state.Task.Status == taskwire.InputRequired {
			lt.setStatusLocked(taskwire.Working)
		}
		lt.mu.Unlock()
	}()
	select {
	case raw := <-a.answer:
		if err := json.Unmarshal(raw, answer); err != nil {
			return nil, fmt.Errorf("the client's answer to %s: %w", method, err)
		}
		return answer, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

func (lt *liveTask) setStatusLocked(st taskwire.Status) {
	lt.state.Task.Status = st
	lt.state.Task.LastUpdatedAt = taskwire.Stamp(time.Now())
	for ch := range lt.subs {
		select {
		case ch <- struct{}{}:
		default: // a wake is pending already
		}
	}
}

// subscribe has ch woken at each change of the task's status, until the
// returned stop.
func (lt *liveTask) subscribe(ch chan struct{}) (stop func()) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if lt.subs == nil {
		lt.subs = map[chan struct{}]struct{}{}
	}
	lt.subs[ch] = struct{}{}
	return func() {
		lt.mu.Lock()
		defer lt.mu.Unlock()
		delete(lt.subs, ch)
	}
}

// snapshot is the task as tasks/get answers it now.
func (lt *liveTask) snapshot() taskState {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	st := lt.state
	if len(lt.asks) == 0 && st.Task.Status == taskwire.InputRequired {
		st.Task.Status = taskwire.Working
	}
	if len(lt.asks) > 0 {
		st.Task.InputRequests = map[string]taskwire.InputRequest{}
		for k, a := range lt.asks {
			st.Task.InputRequests[k] = a.req
		}
	}
	return st
}

// finish records the task's end: cancelled when tasks/cancel stopped it,
// else completed with the call's result (an error result included: the
// tools/call answered).
func (lt *liveTask) finish(ctx context.Context, cause error, res *gomcp.CallToolResult) {
	lt.mu.Lock()
	switch {
	case errors.Is(cause, errTaskCancelled):
		lt.setStatusLocked(taskwire.Cancelled)
		lt.state.Task.StatusMessage = "cancelled by the client"
	case lt.s.ctx.Err() != nil:
		// Server.Close cut the run: no result of the call's own.
		lt.setStatusLocked(taskwire.Failed)
		lt.state.Task.StatusMessage = "the server stopped before the task ended"
		lt.state.Task.Error = &taskwire.RPCError{Code: jsonrpc.CodeInternalError, Message: lt.state.Task.StatusMessage}
	default:
		raw, err := json.Marshal(res)
		if err != nil {
			lt.setStatusLocked(taskwire.Failed)
			lt.state.Task.Error = &taskwire.RPCError{Code: jsonrpc.CodeInternalError, Message: "the result could not be encoded"}
		} else {
			lt.setStatusLocked(taskwire.Completed)
			lt.state.Task.Result = raw
		}
	}
	st := lt.state
	lt.mu.Unlock()
	raw, _ := json.Marshal(st)
	sctx, stop := context.WithTimeout(context.WithoutCancel(ctx), storeWait)
	defer stop()
	id := st.Task.TaskID
	err := lt.s.cfg.Tasks.PutCallResult(sctx, &agent.CallRecord{Run: taskRun(id), Call: id,
		Result: &llm.ToolResult{CallID: id, Content: string(raw), IsError: st.Task.Status != taskwire.Completed}})
	if err != nil {
		lt.s.log.Warn().Err(err).Str("task", id).Msg("the task's end could not be recorded")
	}
}

// renew rewrites the task's record each taskLease until ctx ends, so that
// a process sharing the store knows it is live and sees its status.
func (lt *liveTask) renew(ctx context.Context) {
	tick := time.NewTicker(taskLease)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		st := lt.snapshot()
		st.Task.LastUpdatedAt = taskwire.Stamp(time.Now())
		raw, _ := json.Marshal(st)
		sctx, stop := context.WithTimeout(ctx, storeWait)
		id := st.Task.TaskID
		if err := lt.s.cfg.Tasks.PutCallHandle(sctx, &agent.CallRecord{Run: taskRun(id), Call: id, Handle: raw}); err != nil && ctx.Err() == nil {
			lt.s.log.Warn().Err(err).Str("task", id).Msg("the task's record could not be renewed")
		}
		stop()
	}
}

// taskNotFound is the error of an unknown (or expired, or another
// client's) task.
func taskNotFound(id string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("task not found: %q", id)}
}

// errMissingTasks refuses tasks/* to a client that did not declare the
// extension.
var errMissingTasks = &jsonrpc.Error{Code: taskwire.CodeMissingCapability, Message: "missing required client capability",
	Data: json.RawMessage(`{"requiredCapabilities":{"extensions":{"` + taskwire.Extension + `":{}}}}`)}

// lookupTask finds the task id for the client of ctx: live in this
// process, or recorded in the store.
func (s *Server) lookupTask(ctx context.Context, ss *gomcp.ServerSession, meta map[string]any, id string) (*liveTask, *taskState, error) {
	if !declaredTasks(ss, meta) {
		return nil, nil, errMissingTasks
	}
	owner := ownerFrom(ctx)
	if v, ok := s.tasks.Load(id); ok {
		lt := v.(*liveTask)
		st := lt.snapshot()
		if st.Owner != owner {
			return nil, nil, taskNotFound(id)
		}
		return lt, &st, nil
	}
	if id == "" {
		return nil, nil, taskNotFound(id)
	}
	sctx, stop := context.WithTimeout(ctx, storeWait)
	defer stop()
	recs, err := s.cfg.Tasks.LoadCalls(sctx, taskRun(id))
	if err != nil {
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the task store failed: " + failure.From(err).ModelText()}
	}
	for _, rec := range recs {
		if rec.Call != id {
			continue
		}
		var st taskState
		if rec.Result != nil {
			err = json.Unmarshal([]byte(rec.Result.Content), &st)
		} else {
			// Recorded but not live here: live in another process that
			// renews it, or its process stopped.
			err = json.Unmarshal(rec.Handle, &st)
			if seen, perr := time.Parse(time.RFC3339Nano, st.Task.LastUpdatedAt); perr != nil || time.Since(seen) > staleLease {
				st.Task.Status, st.Task.InputRequests = taskwire.Failed, nil
				st.Task.StatusMessage = "the server stopped before the task ended"
				st.Task.Error = &taskwire.RPCError{Code: jsonrpc.CodeInternalError, Message: st.Task.StatusMessage}
			}
		}
		if err != nil || st.Owner != owner {
			return nil, nil, taskNotFound(id)
		}
		return nil, &st, nil
	}
	return nil, nil, taskNotFound(id)
}

func (s *Server) getTask(ctx context.Context, ss *gomcp.ServerSession, p *taskwire.TaskParams) (*taskwire.TaskResult, error) {
	_, st, err := s.lookupTask(ctx, ss, p.GetMeta(), p.TaskID)
	if err != nil {
		return nil, err
	}
	return &taskwire.TaskResult{ResultType: taskwire.ResultComplete, Task: st.Task}, nil
}

func (s *Server) updateTask(ctx context.Context, ss *gomcp.ServerSession, p *taskwire.UpdateParams) (*taskwire.AckResult, error) {
	lt, _, err := s.lookupTask(ctx, ss, p.GetMeta(), p.TaskID)
	if err != nil {
		return nil, err
	}
	if lt != nil {
		lt.mu.Lock()
		for k, raw := range p.InputResponses {
			if a, ok := lt.asks[k]; ok {
				// Answered once: later answers to the key are ignored.
				delete(lt.asks, k)
				a.answer <- raw
			}
		}
		if len(lt.asks) == 0 && lt.state.Task.Status == taskwire.InputRequired {
			lt.setStatusLocked(taskwire.Working)
		}
		lt.mu.Unlock()
	}
	return &taskwire.AckResult{ResultType: taskwire.ResultComplete}, nil
}

func (s *Server) cancelTask(ctx context.Context, ss *gomcp.ServerSession, p *taskwire.TaskParams) (*taskwire.AckResult, error) {
	lt, _, err := s.lookupTask(ctx, ss, p.GetMeta(), p.TaskID)
	if err != nil {
		return nil, err
	}
	if lt != nil {
		lt.cancel(errTaskCancelled)
	}
	return &taskwire.AckResult{ResultType: taskwire.ResultComplete}, nil
}
