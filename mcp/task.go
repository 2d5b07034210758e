package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/mcp/internal/taskwire"
)

// MCP tasks (the io.modelcontextprotocol/tasks extension, SEP-2663): a
// server may answer a tools/call with a task handle (resultType "task")
// instead of its result. The call then polls tasks/get at the task's
// interval until it ends, answers its input requests through the
// Elicitor, Sampler and roots (tasks/update), cancels it when the call
// ends first (tasks/cancel), and records the task with the call's intent
// (agent.Call.SaveHandle) so that a durable run resumed in another process
// polls the same task rather than calling the tool again.
//
// go-sdk v1.8.0 decodes every tools/call result as a CallToolResult and
// drops the task's fields; the connections that are ours (stdio,
// in-process, WebSocket) hand a task result to the call under taskMetaKey
// in the result's _meta instead (taskConn), and so does the HTTP client of
// a Streamable HTTP server (taskRT, taskhttp.go). The legacy SSE transport
// and transports given in the configuration do not declare the extension.

// taskMetaKey is the _meta key of the rewritten tools/call result that
// carries the task a server answered with.
const taskMetaKey = "dev.switchboard/task"

// taskCancelWait bounds the tasks/cancel sent when a call ends before its
// task.
const taskCancelWait = 5 * time.Second

// declaresTasks reports whether the server's transport lets its calls
// read task results (see taskConn).
func (s *server) declaresTasks() bool {
	switch s.cfg.Type {
	case typeStdio, typeWS, typeHTTP:
		return true
	case typeInProcess:
		return s.cfg.Server != nil
	}
	return false
}

// taskConn is a client connection that rewrites a task answering one of
// its tools/call requests into a CallToolResult that carries it in _meta
// (and strips that key from every other tools/call result).
type taskConn struct {
	gomcp.Connection
	// onTask is told of each task answering a tools/call, by the call's
	// progress token (nil: nobody is).
	onTask func(token, task string)
	// onNotice is told of the task each notifications/tasks names (nil:
	// nobody is); go-sdk knows no such notification, so it goes no
	// further.
	onNotice func(task string)
	mu       sync.Mutex
	calls    map[jsonrpc.ID]string // tools/call ids and their progress tokens
}

// maxTaskCalls bounds the tools/call ids a taskConn remembers (requests
// whose responses never come are forgotten past it).
const maxTaskCalls = 4096

func (c *taskConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && req.Method == "tools/call" {
		c.mu.Lock()
		if len(c.calls) >= maxTaskCalls {
			clear(c.calls)
		}
		c.calls[req.ID] = progressTokenOf(req.Params)
		c.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

func (c *taskConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	for err == nil && isTaskNotice(msg) {
		if t, perr := taskwire.ParseNotification(msg.(*jsonrpc.Request).Params); perr == nil && c.onNotice != nil {
			c.onNotice(t.TaskID)
		}
		msg, err = c.Connection.Read(ctx)
	}
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil {
		c.mu.Lock()
		token, call := c.calls[resp.ID]
		delete(c.calls, resp.ID)
		c.mu.Unlock()
		if call && resp.Error == nil {
			resp.Result = rewriteTaskResult(resp.Result)
			if id := taskIDOf(resp.Result); id != "" && token != "" && c.onTask != nil {
				c.onTask(token, id)
			}
		}
	}
	return msg, err
}

// isTaskNotice reports whether msg is a notifications/tasks.
func isTaskNotice(msg jsonrpc.Message) bool {
	req, ok := msg.(*jsonrpc.Request)
	return ok && !req.IsCall() && req.Method == taskwire.NotificationTasks
}

// rewriteTaskResult turns a tools/call result that is a task into a
// CallToolResult carrying the task under taskMetaKey; any other result
// comes back unchanged, but for a taskMetaKey of its own, which is
// removed (only a task the server answered with is one).
func rewriteTaskResult(raw json.RawMessage) json.RawMessage {
	if !bytes.Contains(raw, []byte(`"task"`)) && !bytes.Contains(raw, []byte(taskMetaKey)) {
		return raw
	}
	var head struct {
		ResultType string                     `json:"resultType"`
		Meta       map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(raw, &head) != nil {
		return raw
	}
	if head.ResultType == taskwire.ResultTask {
		meta := head.Meta
		if meta == nil {
			meta = map[string]json.RawMessage{}
		}
		meta[taskMetaKey] = raw
		out, err := json.Marshal(map[string]any{"content": []any{}, "_meta": meta})
		if err != nil {
			return raw
		}
		return out
	}
	if _, ok := head.Meta[taskMetaKey]; !ok {
		return raw
	}
	var all map[string]json.RawMessage
	if json.Unmarshal(raw, &all) != nil {
		return raw
	}
	delete(head.Meta, taskMetaKey)
	m, _ := json.Marshal(head.Meta)
	all["_meta"] = m
	out, err := json.Marshal(all)
	if err != nil {
		return raw
	}
	return out
}

// progressTokenOf is the progress token of a request's parameters ("":
// none, or not a string: the Manager's are strings).
func progressTokenOf(params json.RawMessage) string {
	var p struct {
		Meta struct {
			ProgressToken any `json:"progressToken"`
		} `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return ""
	}
	t, _ := p.Meta.ProgressToken.(string)
	return t
}

// taskIDOf is the id of the task a rewritten tools/call result carries
// ("" for a result).
func taskIDOf(res json.RawMessage) string {
	if !bytes.Contains(res, []byte(taskMetaKey)) {
		return ""
	}
	var r struct {
		Meta map[string]struct {
			TaskID string `json:"taskId"`
		} `json:"_meta"`
	}
	if json.Unmarshal(res, &r) != nil {
		return ""
	}
	return r.Meta[taskMetaKey].TaskID
}

// onTask learns the task answering the tools/call of token: the call
// follows it, or, when the call gave up before the answer reached it, the
// task is cancelled (nobody would follow it).
func (s *server) onTask(token, task string) {
	s.mu.Lock()
	c, live := s.inflight[token]
	if live {
		c.task = task
	}
	sess := s.sess
	s.mu.Unlock()
	if !live && sess != nil {
		s.cancelOrphan(sess, task)
	}
}

// cancelOrphan sends tasks/cancel for a task no call follows, on a
// goroutine of the Manager's (bounded by taskCancelWait and Close).
func (s *server) cancelOrphan(sess *gomcp.ClientSession, task string) {
	s.m.wg.Go(func() {
		ctx, stop := context.WithTimeout(s.m.ctx, taskCancelWait)
		defer stop()
		p := &taskwire.TaskParams{TaskID: task}
		if _, err := gomcp.CallCustomMethod[*taskwire.TaskParams, *taskwire.AckResult](ctx, sess, taskwire.MethodCancel, p); err != nil {
			s.log.Info().Err(err).Str("task", task).Msg("tasks/cancel of a task no call follows failed")
		}
	})
}

// taskOf returns the task a tools/call result carries (nil for a result),
// or why the task the server answered with is not valid.
func taskOf(res *gomcp.CallToolResult) (*taskwire.Task, error) {
	v, ok := res.Meta[taskMetaKey]
	if !ok {
		return nil, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return taskwire.Parse(raw)
}

// taskHandle is what a call records of its task (agent.Call.SaveHandle).
type taskHandle struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
	Task   string `json:"task"`
	// Answered are the input requests answered so far.
	Answered []string `json:"answered,omitempty"`
}

// resumedTask is the task a resumed call of this server's tool recorded,
// if any.
func (s *server) resumedTask(call *agent.Call, orig string) *taskHandle {
	raw := call.Handle()
	if raw == nil {
		return nil
	}
	var h taskHandle
	if json.Unmarshal(raw, &h) != nil || h.Server != s.cfg.Name || h.Tool != orig || h.Task == "" {
		return nil
	}
	return &h
}

// taskFollower follows one task to its end.
type taskFollower struct {
	s        *server
	sess     *gomcp.ClientSession
	call     *agent.Call
	model    string
	h        taskHandle
	answered map[string]bool
	touch    func()
	lastMsg  string
}

// followTask polls the task t until it ends and returns its result.
func (s *server) followTask(ctx context.Context, sess *gomcp.ClientSession, call *agent.Call, model string, h taskHandle,
	t *taskwire.Task, touch func()) (*gomcp.CallToolResult, *gomcp.ClientSession, error) {
	f := &taskFollower{s: s, sess: sess, call: call, model: model, h: h, answered: map[string]bool{}, touch: touch}
	for _, k := range h.Answered {
		f.answered[k] = true
	}
	f.save(ctx)
	res, err := f.follow(ctx, t)
	return res, f.sess, err
}

// save records the task with the call's intent; a store that fails only
// costs the resume (which then holds the call in doubt).
func (f *taskFollower) save(ctx context.Context) {
	raw, _ := json.Marshal(f.h)
	if err := f.call.SaveHandle(ctx, raw); err != nil {
		f.s.log.Warn().Err(err).Str("task", f.h.Task).Msg("the task could not be recorded with its call; a resumed run will not poll it")
	}
}

func (f *taskFollower) follow(ctx context.Context, t *taskwire.Task) (*gomcp.CallToolResult, error) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	// A notifications/tasks for the task wakes the wait at once; the
	// poll interval stays the bound (and the way without notifications).
	notices, forget := f.s.notices.watch(f.h.Task)
	defer forget()
	var listening *gomcp.ClientSession
	stopListen := func() {}
	defer func() { stopListen() }()
	for {
		if !t.Status.Terminal() && listening != f.sess && f.s.serverNotifies() {
			// A new session (the task outlives a lost one) listens anew.
			stopListen()
			stopListen, listening = f.listen(ctx), f.sess
		}
		if t.TaskID != f.h.Task {
			return nil, f.protocol(fmt.Sprintf("tasks/get for task %q answered with task %q", f.h.Task, t.TaskID), nil)
		}
		if t.StatusMessage != "" && t.StatusMessage != f.lastMsg {
			f.lastMsg = t.StatusMessage
			f.call.ReportProgress(agent.Progress{Message: t.StatusMessage})
		}
		switch t.Status {
		case taskwire.Completed:
			var res gomcp.CallToolResult
			if err := json.Unmarshal(t.Result, &res); err != nil {
				return nil, f.protocol("the completed task's result is not a tool result", err)
			}
			return &res, nil
		case taskwire.Failed:
			return nil, &jsonrpc.Error{Code: t.Error.Code, Message: t.Error.Message}
		case taskwire.Cancelled:
			msg := "the server cancelled the task"
			if t.StatusMessage != "" {
				msg += ": " + t.StatusMessage
			}
			return nil, &failure.Error{Kind: failure.ToolError, Source: failure.SourceMCP, Name: f.s.cfg.Name, Tool: f.model,
				Op: "task", Message: msg}
		case taskwire.InputRequired:
			if err := f.answer(ctx, t); err != nil {
				f.cancel(ctx)
				return nil, err
			}
		}
		if exp, ok := t.Expires(); ok && time.Now().After(exp) {
			f.cancel(ctx)
			return nil, &failure.Error{Kind: failure.Timeout, Source: failure.SourceMCP, Name: f.s.cfg.Name, Tool: f.model, Op: "task",
				Message: fmt.Sprintf("the task %s did not end within its time to live", t.TaskID)}
		}
		timer.Reset(t.Interval())
		select {
		case <-timer.C:
		case <-notices:
			timer.Stop()
		case <-ctx.Done():
			return nil, f.ended(ctx)
		}
		next, err := f.get(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil, f.ended(ctx)
			}
			return nil, err
		}
		t = next
	}
}

// get polls the task once; a lost connection is re-established (the task
// outlives it).
func (f *taskFollower) get(ctx context.Context) (*taskwire.Task, error) {
	p := &taskwire.TaskParams{TaskID: f.h.Task}
	res, err := gomcp.CallCustomMethod[*taskwire.TaskParams, *taskwire.TaskResult](ctx, f.sess, taskwire.MethodGet, p)
	if err != nil && ctx.Err() == nil && (errors.Is(err, gomcp.ErrConnectionClosed) || sessionMissing(err)) {
		sess, serr := f.s.sessionAfter(ctx, f.sess)
		if serr != nil {
			return nil, err
		}
		f.sess = sess
		res, err = gomcp.CallCustomMethod[*taskwire.TaskParams, *taskwire.TaskResult](ctx, f.sess, taskwire.MethodGet, p)
	}
	if err != nil {
		return nil, err
	}
	if err := res.Task.Check(); err != nil {
		return nil, f.protocol("tasks/get answered with an invalid task", err)
	}
	if f.touch != nil {
		f.touch()
	}
	return &res.Task, nil
}

// answer answers the task's input requests not answered yet, through
// tasks/update.
func (f *taskFollower) answer(ctx context.Context, t *taskwire.Task) error {
	keys := make([]string, 0, len(t.InputRequests))
	for k := range t.InputRequests {
		if !f.answered[k] {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	slices.Sort(keys)
	responses := map[string]json.RawMessage{}
	for _, k := range keys {
		raw, err := f.s.fulfil(ctx, t.InputRequests[k])
		if err != nil {
			return &failure.Error{Kind: failure.ToolError, Source: failure.SourceMCP, Name: f.s.cfg.Name, Tool: f.model, Op: "task",
				Message: fmt.Sprintf("the task's input request %q cannot be answered: %v", k, err)}
		}
		responses[k] = raw
	}
	p := &taskwire.UpdateParams{TaskID: t.TaskID, InputResponses: responses}
	if _, err := gomcp.CallCustomMethod[*taskwire.UpdateParams, *taskwire.AckResult](ctx, f.sess, taskwire.MethodUpdate, p); err != nil {
		return err
	}
	for _, k := range keys {
		f.answered[k] = true
		f.h.Answered = append(f.h.Answered, k)
	}
	f.save(ctx)
	return nil
}

// fulfil answers one input request as the standalone request would be:
// elicitation through the Elicitor, sampling through the Sampler, roots
// from the configuration.
func (s *server) fulfil(ctx context.Context, r taskwire.InputRequest) (json.RawMessage, error) {
	params := r.Params
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	switch r.Method {
	case "elicitation/create":
		var p gomcp.ElicitParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, fmt.Errorf("elicitation parameters: %w", err)
		}
		if s.m.cfg.Elicitor == nil {
			return json.Marshal(&gomcp.ElicitResult{Action: string(agent.ElicitDecline)})
		}
		res, err := s.onElicit(ctx, &gomcp.ElicitRequest{Params: &p})
		if err != nil {
			return nil, err
		}
		if p.URL == "" && p.Mode != "url" {
			if err := applyElicitDefaults(p.RequestedSchema, res); err != nil {
				return nil, err
			}
		}
		return json.Marshal(res)
	case "sampling/createMessage":
		if s.m.cfg.Sampler == nil {
			return nil, errors.New("no Sampler is configured")
		}
		var p gomcp.CreateMessageParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, fmt.Errorf("sampling parameters: %w", err)
		}
		res, err := s.onSample(ctx, &gomcp.CreateMessageRequest{Params: &p})
		if err != nil {
			return nil, err
		}
		return json.Marshal(res)
	case "roots/list":
		roots := []*gomcp.Root{}
		for _, r := range s.cfg.Roots {
			roots = append(roots, rootOf(r))
		}
		return json.Marshal(&gomcp.ListRootsResult{Roots: roots})
	}
	return nil, fmt.Errorf("unsupported method %q", r.Method)
}

// ended cancels the task of a call whose context ended, unless the run is
// handed over to another process (which polls the task on), and returns
// why the call ended.
func (f *taskFollower) ended(ctx context.Context) error {
	if !errors.Is(context.Cause(ctx), agent.ErrHandover) {
		f.cancel(ctx)
	}
	return context.Cause(ctx)
}

// cancel asks the server to cancel the task (cooperative: its answer is
// only an acknowledgement).
func (f *taskFollower) cancel(ctx context.Context) {
	cctx, stop := context.WithTimeout(context.WithoutCancel(ctx), taskCancelWait)
	defer stop()
	p := &taskwire.TaskParams{TaskID: f.h.Task}
	if _, err := gomcp.CallCustomMethod[*taskwire.TaskParams, *taskwire.AckResult](cctx, f.sess, taskwire.MethodCancel, p); err != nil {
		f.s.log.Info().Err(err).Str("task", f.h.Task).Msg("tasks/cancel failed")
	}
}

func (f *taskFollower) protocol(msg string, err error) error {
	return &failure.Error{Kind: failure.Protocol, Source: failure.SourceMCP, Name: f.s.cfg.Name, Tool: f.model, Op: "task",
		Message: msg, Err: err}
}

// taskNotices wakes the followers of a task when a notifications/tasks
// names it. The zero value is ready.
type taskNotices struct {
	mu sync.Mutex
	m  map[string]map[chan struct{}]struct{}
}

// watch returns a channel that receives when a notification names task
// (a wake pending holds one), and the stop that forgets it.
func (n *taskNotices) watch(task string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	n.mu.Lock()
	if n.m == nil {
		n.m = map[string]map[chan struct{}]struct{}{}
	}
	if n.m[task] == nil {
		n.m[task] = map[chan struct{}]struct{}{}
	}
	n.m[task][ch] = struct{}{}
	n.mu.Unlock()
	return ch, func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		delete(n.m[task], ch)
		if len(n.m[task]) == 0 {
			delete(n.m, task)
		}
	}
}

// notify wakes the followers of task; a task nobody follows is ignored.
func (n *taskNotices) notify(task string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for ch := range n.m[task] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// serverNotifies reports whether the server declared the tasks extension,
// so that a listen for its tasks' status notifications may be answered.
func (s *server) serverNotifies() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.caps == nil {
		return false
	}
	_, ok := s.caps.Extensions[taskwire.Extension]
	return ok
}

// listen opens, on the follower's session, a subscriptions/listen for the
// task's status notifications (SEP-2663), which go-sdk sends without
// awaiting its answer; the stream lasts until stop (which sends
// notifications/cancelled for it). A server that does not agree to the
// task (its acknowledgement leaves it out) or does not know the method
// sends no notification: polling goes on as before.
func (f *taskFollower) listen(ctx context.Context) (stop func()) {
	lctx, cancel := context.WithCancel(ctx)
	p := &taskwire.ListenParams{Notifications: taskwire.TaskSubscriptions{TaskIDs: []string{f.h.Task}}}
	if _, err := gomcp.CallCustomMethod[*taskwire.ListenParams, *gomcp.SubscriptionsListenResult](lctx, f.sess, taskwire.MethodListen, p); err != nil {
		f.s.log.Debug().Err(err).Str("task", f.h.Task).Msg("subscriptions/listen for the task's notifications failed; polling only")
	}
	return cancel
}
