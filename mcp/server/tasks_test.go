package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/mcp"
	"github.com/switchboard-dev/switchboard/mcp/server"
)

// methodCounter counts the requests a server receives, by method.
type methodCounter struct {
	mu sync.Mutex
	n  map[string]int
	// polled, when set, is closed at the first tasks/get.
	polled chan struct{}
}

func (c *methodCounter) middleware(next gomcp.MethodHandler) gomcp.MethodHandler {
	return func(ctx context.Context, method string, req gomcp.Request) (gomcp.Result, error) {
		c.mu.Lock()
		if c.n == nil {
			c.n = map[string]int{}
		}
		c.n[method]++
		if method == "tasks/get" && c.n[method] == 1 && c.polled != nil {
			close(c.polled)
		}
		c.mu.Unlock()
		return next(ctx, method, req)
	}
}

func (c *methodCounter) get(method string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[method]
}

// taskManager is a Manager whose server "tasks" is srv, in process, with
// elicitor answering its questions.
func taskManager(t *testing.T, srv *server.Server, elicitor agent.Elicitor) *mcp.Manager {
	t.Helper()
	return taskManagerOver(t, srv, elicitor, "pipe")
}

// taskManagerOver is taskManager over a transport: "pipe" (in process) or
// "http" (Streamable HTTP; srv's Handler on a test server).
func taskManagerOver(t *testing.T, srv *server.Server, elicitor agent.Elicitor, transport string) *mcp.Manager {
	t.Helper()
	sc := mcp.ServerConfig{Name: "tasks", Server: srv.MCP()}
	if transport == "http" {
		hs := httptest.NewServer(srv.Handler())
		t.Cleanup(hs.Close)
		sc = mcp.ServerConfig{Name: "tasks", Type: "http", URL: hs.URL}
	}
	m, err := mcp.New(testkit.Ctx(t, 30*time.Second), mcp.Config{Servers: []mcp.ServerConfig{sc},
		Elicitor: elicitor})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// TestTasksThroughManager: a served agent's call from a Manager (which
// declares the tasks extension) is answered with a task: the Manager
// polls it to its result, its permission ask reaches the Manager's
// Elicitor as an input request answered through tasks/update, and a call
// ended first cancels the task through tasks/cancel, which cancels the
// run.
func TestTasksThroughManager(t *testing.T) {
	for _, c := range []struct {
		name, answer, transport string
		stateless               bool
		wrote                   int32
	}{
		{"accepted", "accept", "pipe", false, 1},
		{"declined", "decline", "pipe", false, 0},
		{"accepted over HTTP", "accept", "http", false, 1},
		{"accepted over stateless HTTP", "accept", "http", true, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var wrote atomic.Int32
			write := agent.NewFuncTool(agent.ToolSpec{Name: "write_note", Destructive: true, InputSchema: json.RawMessage(`{"type":"object"}`)},
				func(context.Context, json.RawMessage) (*agent.Result, error) {
					wrote.Add(1)
					return agent.TextResult("written"), nil
				})
			client := new(server.Client)
			a, err := agent.New(context.Background(), agent.Config{Name: "scribe", Description: "writes notes",
				Model: llm.NewScripted(llm.Calls(llm.ToolCall{ID: "1", Name: "write_note", Args: json.RawMessage(`{}`)}), llm.Say("done")),
				Tools: []agent.Tool{write}, Elicitor: client.Elicitor()})
			if err != nil {
				t.Fatal(err)
			}
			srv := newServer(t, server.Config{Runners: []agent.Runner{a}, Client: client, Tasks: agent.NewMemoryStore(agent.MemoryStoreOptions{}),
				Stateless: c.stateless})
			var count methodCounter
			srv.MCP().AddReceivingMiddleware(count.middleware)
			var asked atomic.Int32
			m := taskManagerOver(t, srv, agent.ElicitorFunc(func(_ context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
				asked.Add(1)
				if !strings.Contains(e.Message, "write_note") {
					t.Errorf("the question does not name the tool: %q", e.Message)
				}
				return agent.ElicitationResult{Action: agent.ElicitAction(c.answer)}, nil
			}), c.transport)
			res, err := m.CallTool(testkit.Ctx(t, 30*time.Second), "tasks", "scribe", json.RawMessage(`{"input":"write it"}`))
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError || len(res.Parts) == 0 || res.Parts[0].Text != "done" {
				t.Errorf("result %+v", res)
			}
			if asked.Load() != 1 || wrote.Load() != c.wrote {
				t.Errorf("asked %d times (want 1), the tool ran %d times (want %d)", asked.Load(), wrote.Load(), c.wrote)
			}
			if count.get("tasks/get") == 0 || count.get("tasks/update") != 1 {
				t.Errorf("tasks/get %d times, tasks/update %d times (want some, 1): the call was not a task", count.get("tasks/get"), count.get("tasks/update"))
			}
		})
	}

	t.Run("sampled", func(t *testing.T) {
		// The served agent thinks with its client's model: the sampling
		// request is an input request of the task, answered by the
		// Manager's Sampler.
		client := new(server.Client)
		a, err := agent.New(context.Background(), agent.Config{Name: "echoer", Description: "answers with the caller's model",
			Model: client.Model()})
		if err != nil {
			t.Fatal(err)
		}
		srv := newServer(t, server.Config{Runners: []agent.Runner{a}, Client: client, Tasks: agent.NewMemoryStore(agent.MemoryStoreOptions{})})
		var count methodCounter
		srv.MCP().AddReceivingMiddleware(count.middleware)
		m, err := mcp.New(testkit.Ctx(t, 30*time.Second), mcp.Config{Servers: []mcp.ServerConfig{{Name: "tasks", Server: srv.MCP()}},
			Sampler: sampler(func(_ context.Context, req agent.SamplingRequest) (agent.SamplingResult, error) {
				return agent.SamplingResult{Model: "manager-model", Text: "sampled: " + req.Messages[len(req.Messages)-1].Text}, nil
			})})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		res, err := m.CallTool(testkit.Ctx(t, 30*time.Second), "tasks", "echoer", json.RawMessage(`{"input":"ping"}`))
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError || len(res.Parts) == 0 || res.Parts[0].Text != "sampled: ping" || count.get("tasks/update") != 1 {
			t.Errorf("result %+v, %d tasks/update", res, count.get("tasks/update"))
		}
	})

	t.Run("cancelled before its task arrived", func(t *testing.T) {
		// The call gives up while the server makes its task (the
		// cancellation reaches the server too late): the Manager, seeing
		// the task's handle arrive for no call, cancels it. The run may be
		// cancelled before or after its tool starts, so the test waits for
		// the task's recorded end, which must be cancelled.
		wait := agent.NewFuncTool(agent.ToolSpec{Name: "wait", ReadOnly: true},
			func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
				<-ctx.Done()
				return nil, ctx.Err()
			})
		a, err := agent.New(context.Background(), agent.Config{Name: "waiter", Description: "waits",
			Model: llm.NewScripted(llm.Calls(llm.ToolCall{ID: "1", Name: "wait", Args: json.RawMessage(`{}`)}), llm.Say("never")),
			Tools: []agent.Tool{wait}})
		if err != nil {
			t.Fatal(err)
		}
		store := agent.NewMemoryStore(agent.MemoryStoreOptions{})
		srv := newServer(t, server.Config{Runners: []agent.Runner{a}, Tasks: store})
		var count methodCounter
		ctx, cancel := context.WithCancel(testkit.Ctx(t, 30*time.Second))
		gaveUp := make(chan struct{})
		taskID := make(chan string, 1)
		srv.MCP().AddReceivingMiddleware(func(next gomcp.MethodHandler) gomcp.MethodHandler {
			return func(rctx context.Context, method string, req gomcp.Request) (gomcp.Result, error) {
				if method != "tools/call" {
					return next(rctx, method, req)
				}
				cancel()
				<-gaveUp
				res, err := next(context.WithoutCancel(rctx), method, req)
				var h struct {
					TaskID string `json:"taskId"`
				}
				raw, _ := json.Marshal(res)
				_ = json.Unmarshal(raw, &h)
				taskID <- h.TaskID
				return res, err
			}
		}, count.middleware)
		m := taskManager(t, srv, nil)
		if _, err := m.CallTool(ctx, "tasks", "waiter", json.RawMessage(`{"input":"wait"}`)); err == nil {
			t.Fatal("a cancelled call succeeded")
		}
		close(gaveUp)
		id := <-taskID
		if id == "" {
			t.Fatal("the call was not answered with a task")
		}
		ended := func() string { // the task's recorded end ("" while it runs)
			calls, err := store.LoadCalls(context.Background(), "mcp-task:"+id)
			if err != nil || len(calls) == 0 || calls[0].Result == nil {
				return ""
			}
			var st struct {
				Task struct {
					Status string `json:"status"`
				} `json:"task"`
			}
			_ = json.Unmarshal([]byte(calls[0].Result.Content), &st)
			return st.Task.Status
		}
		testkit.WaitFor(t, 20*time.Second, "the end of the task nobody follows", func() bool { return ended() != "" })
		if got := ended(); got != "cancelled" {
			t.Errorf("the task nobody follows ended %q, want cancelled", got)
		}
		if count.get("tasks/cancel") != 1 {
			t.Errorf("tasks/cancel %d times, want 1", count.get("tasks/cancel"))
		}
	})

	t.Run("cancelled", func(t *testing.T) {
		stopped := make(chan error, 1)
		started := make(chan struct{})
		wait := agent.NewFuncTool(agent.ToolSpec{Name: "wait", ReadOnly: true},
			func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
				close(started)
				<-ctx.Done()
				stopped <- context.Cause(ctx)
				return nil, ctx.Err()
			})
		a, err := agent.New(context.Background(), agent.Config{Name: "waiter", Description: "waits",
			Model: llm.NewScripted(llm.Calls(llm.ToolCall{ID: "1", Name: "wait", Args: json.RawMessage(`{}`)}), llm.Say("never")),
			Tools: []agent.Tool{wait}})
		if err != nil {
			t.Fatal(err)
		}
		srv := newServer(t, server.Config{Runners: []agent.Runner{a}, Tasks: agent.NewMemoryStore(agent.MemoryStoreOptions{})})
		count := methodCounter{polled: make(chan struct{})}
		srv.MCP().AddReceivingMiddleware(count.middleware)
		m := taskManager(t, srv, nil)
		ctx, cancel := context.WithCancel(testkit.Ctx(t, 30*time.Second))
		// Cancelled while the Manager polls (one cancelled before its
		// task's handle arrived is the case above).
		go func() {
			<-started
			select {
			case <-count.polled:
			case <-ctx.Done():
			}
			cancel()
		}()
		if _, err := m.CallTool(ctx, "tasks", "waiter", json.RawMessage(`{"input":"wait"}`)); err == nil {
			t.Fatal("a cancelled call succeeded")
		}
		select {
		case <-stopped:
		case <-time.After(20 * time.Second):
			t.Fatal("the served run was not cancelled")
		}
		if count.get("tasks/cancel") != 1 {
			t.Errorf("tasks/cancel %d times, want 1", count.get("tasks/cancel"))
		}
	})
}

// TestTaskRefusedWithoutCapability: a client that did not declare the
// extension gets the call's result, never a task, and tasks/get is
// refused with -32021.
func TestTaskRefusedWithoutCapability(t *testing.T) {
	a, err := agent.New(context.Background(), agent.Config{Name: "greeter", Description: "greets", Model: llm.NewScripted(llm.Say("hello"))})
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, server.Config{Runners: []agent.Runner{a}, Tasks: agent.NewMemoryStore(agent.MemoryStoreOptions{})})
	cs := connectMem(t, srv, nil)
	if txt, isErr := callText(t, cs, "greeter", map[string]any{"input": "hi"}); isErr || txt != "hello" {
		t.Errorf("%q (error %v)", txt, isErr)
	}
	if got := cs.InitializeResult().Capabilities.Extensions["io.modelcontextprotocol/tasks"]; got == nil {
		t.Errorf("the server does not declare the tasks extension: %v", cs.InitializeResult().Capabilities.Extensions)
	}
}

// haltStore is a store whose writes fail once it is killed, as a process
// that died writes nothing more; kill is called when a call's handle is
// recorded (with its intent or after it).
type haltStore struct {
	agent.Store
	killed atomic.Bool
	kill   func()
}

var errDead = errors.New("the process died")

func (h *haltStore) write(do func() error) error {
	if h.killed.Load() {
		return failure.Wrap(failure.Unavailable, failure.SourceAgent, errDead)
	}
	return do()
}

func (h *haltStore) PutCallHandle(ctx context.Context, c *agent.CallRecord) error {
	err := h.write(func() error { return h.Store.PutCallHandle(ctx, c) })
	if err == nil && h.killed.CompareAndSwap(false, true) {
		h.kill()
	}
	return err
}

func (h *haltStore) SaveCheckpoint(ctx context.Context, cp *agent.Checkpoint, expect uint64) (rev uint64, err error) {
	err = h.write(func() error { rev, err = h.Store.SaveCheckpoint(ctx, cp, expect); return err })
	return rev, err
}

func (h *haltStore) PutIntent(ctx context.Context, c *agent.CallRecord) error {
	err := h.write(func() error { return h.Store.PutIntent(ctx, c) })
	if err == nil && len(c.Handle) > 0 && h.killed.CompareAndSwap(false, true) {
		h.kill()
	}
	return err
}

func (h *haltStore) PutCallResult(ctx context.Context, c *agent.CallRecord) error {
	return h.write(func() error { return h.Store.PutCallResult(ctx, c) })
}

func (h *haltStore) AppendSession(ctx context.Context, rec *agent.SessionRecord, expect uint64) (rev uint64, err error) {
	err = h.write(func() error { rev, err = h.Store.AppendSession(ctx, rec, expect); return err })
	return rev, err
}

// TestTaskSurvivesRestart: a durable run whose MCP call was answered with
// a task records the task with the call's intent; the process dies while
// it polls (its store writes fail from then on, its context ends as a
// handover), and the run resumed by another process (a new agent and
// Manager on the same store) polls the same task to its result: the
// served run ran once, and no tasks/cancel was sent.
func TestTaskSurvivesRestart(t *testing.T) {
	release := make(chan struct{})
	var served atomic.Int32
	worker := slowWorker(t, release, &served)
	srv := newServer(t, server.Config{Runners: []agent.Runner{worker}, Tasks: agent.NewMemoryStore(agent.MemoryStoreOptions{})})
	var count methodCounter
	srv.MCP().AddReceivingMiddleware(count.middleware)

	shared := agent.NewMemoryStore(agent.MemoryStoreOptions{})
	ctx := testkit.Ctx(t, 60*time.Second)
	runCtx, die := context.WithCancelCause(ctx)
	dying := &haltStore{Store: shared, kill: func() { die(agent.ErrHandover) }}
	call := llm.ToolCall{ID: "c1", Name: "mcp__tasks__slow", Args: json.RawMessage(`{"input":"go"}`)}
	allow := &agent.Permissions{Rules: []agent.Rule{{Tool: "mcp__tasks__*", Permission: agent.Allow}}}
	m1 := taskManager(t, srv, nil)
	first, err := agent.New(ctx, agent.Config{Name: "boss", Model: llm.NewScripted(llm.Calls(call), llm.Say("unreachable")),
		Toolsets: []agent.Toolset{m1.Toolset()}, Permissions: allow, Durable: agent.Durable(dying, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.Run(runCtx, "delegate"); err == nil {
		t.Fatal("the run of the dead process finished")
	}
	m1.Close()
	runs, err := shared.ListRuns(ctx)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v, %v", runs, err)
	}
	calls, err := shared.LoadCalls(ctx, runs[0])
	if err != nil || len(calls) != 1 || calls[0].Result != nil || !strings.Contains(string(calls[0].Handle), `"task":"task-`) {
		t.Fatalf("the call's record %+v (%v): want an intent with the task's handle and no result", calls, err)
	}

	m2 := taskManager(t, srv, nil)
	second, err := agent.New(ctx, agent.Config{Name: "boss", Model: llm.NewScripted(llm.Say("the worker finished")),
		Toolsets: []agent.Toolset{m2.Toolset()}, Permissions: allow, Durable: agent.Durable(shared, 0)})
	if err != nil {
		t.Fatal(err)
	}
	close(release)
	ans, err := second.Resume(ctx, runs[0])
	if err != nil {
		t.Fatal(err)
	}
	if ans.Text != "the worker finished" {
		t.Errorf("answer %q", ans.Text)
	}
	calls, _ = shared.LoadCalls(ctx, runs[0])
	if len(calls) != 1 || calls[0].Result == nil || !strings.Contains(calls[0].Result.Content, "finished") {
		t.Errorf("the call's record after the resume: %+v", calls)
	}
	if served.Load() != 1 || count.get("tools/call") != 1 || count.get("tasks/cancel") != 0 {
		t.Errorf("served %d runs, %d tools/call, %d tasks/cancel; want 1, 1, 0", served.Load(), count.get("tools/call"), count.get("tasks/cancel"))
	}
}

// TestTaskPollsAtInterval: the Manager polls a task at the interval the
// server suggests (500 ms), on synctest's clock: ten polls in five
// seconds, then the result once the run ends.
func TestTaskPollsAtInterval(t *testing.T) { synctest.Test(t, testTaskPollsAtInterval) }

func testTaskPollsAtInterval(t *testing.T) {
	release := make(chan struct{})
	worker := slowWorker(t, release, nil)
	srv := newServer(t, server.Config{Runners: []agent.Runner{worker}, Tasks: agent.NewMemoryStore(agent.MemoryStoreOptions{})})
	var count methodCounter
	srv.MCP().AddReceivingMiddleware(count.middleware)
	m := taskManager(t, srv, nil)
	type outcome struct {
		res *agent.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := m.CallTool(context.Background(), "tasks", "slow", json.RawMessage(`{"input":"go"}`))
		done <- outcome{res, err}
	}()
	synctest.Wait()
	if n := count.get("tools/call"); n != 1 {
		t.Fatalf("%d tools/call, want 1", n)
	}
	time.Sleep(5*time.Second + time.Millisecond)
	synctest.Wait()
	if n := count.get("tasks/get"); n != 10 {
		t.Errorf("%d polls in 5 s, want 10 (one each 500 ms)", n)
	}
	close(release)
	o := <-done
	if o.err != nil || len(o.res.Parts) == 0 || o.res.Parts[0].Text != "finished" {
		t.Errorf("result %+v, %v", o.res, o.err)
	}
}

// getTaskParams and getTaskResult are tasks/get as a client outside
// Switchboard spells it.
type getTaskParams struct {
	gomcp.ParamsBase
	TaskID string `json:"taskId"`
}

type getTaskResult struct {
	gomcp.ResultBase
	ResultType string          `json:"resultType"`
	TaskID     string          `json:"taskId"`
	Status     string          `json:"status"`
	Result     json.RawMessage `json:"result"`
}

// tasksClient is a go-sdk client that declares the tasks extension (or
// not) and may send tasks/get.
func tasksClient(t *testing.T, srv *server.Server, declare bool) *gomcp.ClientSession {
	t.Helper()
	opts := &gomcp.ClientOptions{Capabilities: &gomcp.ClientCapabilities{}}
	if declare {
		opts.Capabilities.AddExtension("io.modelcontextprotocol/tasks", nil)
	}
	ctx := testkit.Ctx(t, 30*time.Second)
	st, ct := gomcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := gomcp.NewClient(&gomcp.Implementation{Name: "test-client", Version: "1"}, opts)
	if err := gomcp.AddSendingCustomMethod[*getTaskParams, *getTaskResult](c, "tasks/get"); err != nil {
		t.Fatal(err)
	}
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

func getTask(t *testing.T, cs *gomcp.ClientSession, id string) (*getTaskResult, error) {
	t.Helper()
	return gomcp.CallCustomMethod[*getTaskParams, *getTaskResult](testkit.Ctx(t, 10*time.Second), cs, "tasks/get", &getTaskParams{TaskID: id})
}

// TestTaskOutlivesServer: a task's end is recorded in Config.Tasks, so a
// new Server on the same store (a restart, another replica) answers
// tasks/get for it; an unknown task is -32602 and a client that did not
// declare the extension gets -32021.
func TestTaskOutlivesServer(t *testing.T) {
	st := agent.NewMemoryStore(agent.MemoryStoreOptions{})
	a, err := agent.New(context.Background(), agent.Config{Name: "greeter", Description: "greets", Model: llm.NewScripted(llm.Say("hello"))})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var handle []byte
	first, err := server.New(context.Background(), server.Config{Runners: []agent.Runner{a}, Tasks: st})
	if err != nil {
		t.Fatal(err)
	}
	first.MCP().AddReceivingMiddleware(func(next gomcp.MethodHandler) gomcp.MethodHandler {
		return func(ctx context.Context, method string, req gomcp.Request) (gomcp.Result, error) {
			res, err := next(ctx, method, req)
			if method == "tools/call" && err == nil {
				b, _ := json.Marshal(res)
				mu.Lock()
				handle = b
				mu.Unlock()
			}
			return res, err
		}
	})
	cs := tasksClient(t, first, true)
	res, err := cs.CallTool(testkit.Ctx(t, 10*time.Second), &gomcp.CallToolParams{Name: "greeter", Arguments: map[string]any{"input": "hi"}})
	if err != nil || len(res.Content) != 0 {
		t.Fatalf("a task's handle: %+v, %v", res, err)
	}
	mu.Lock()
	var created struct{ ResultType, TaskID string }
	_ = json.Unmarshal(handle, &created)
	mu.Unlock()
	if created.ResultType != "task" || !strings.HasPrefix(created.TaskID, "task-") {
		t.Fatalf("tools/call answered %s", handle)
	}
	testkit.WaitFor(t, 10*time.Second, "the task's end recorded", func() bool {
		calls, err := st.LoadCalls(context.Background(), "mcp-task:"+created.TaskID)
		return err == nil && len(calls) == 1 && calls[0].Result != nil
	})
	cs.Close()
	first.Close()

	second := newServer(t, server.Config{Runners: []agent.Runner{a}, Tasks: st})
	cs2 := tasksClient(t, second, true)
	got, err := getTask(t, cs2, created.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	var result gomcp.CallToolResult
	if got.ResultType != "complete" || got.Status != "completed" || json.Unmarshal(got.Result, &result) != nil ||
		len(result.Content) == 0 || result.Content[0].(*gomcp.TextContent).Text != "hello" {
		t.Errorf("tasks/get from another server: %+v (%s)", got, got.Result)
	}
	var we *jsonrpc.Error
	if _, err := getTask(t, cs2, "task-unknown"); !errors.As(err, &we) || we.Code != -32602 {
		t.Errorf("an unknown task: %v, want -32602", err)
	}
	if _, err := getTask(t, tasksClient(t, second, false), created.TaskID); !errors.As(err, &we) || we.Code != -32021 {
		t.Errorf("a client without the extension: %v, want -32021", err)
	}
}

type sampler func(ctx context.Context, req agent.SamplingRequest) (agent.SamplingResult, error)

func (f sampler) Sample(ctx context.Context, req agent.SamplingRequest) (agent.SamplingResult, error) {
	return f(ctx, req)
}

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// httpTasksClient is tasksClient over Streamable HTTP with a bearer token.
func httpTasksClient(t *testing.T, url, token string) *gomcp.ClientSession {
	t.Helper()
	opts := &gomcp.ClientOptions{Capabilities: &gomcp.ClientCapabilities{}}
	opts.Capabilities.AddExtension("io.modelcontextprotocol/tasks", nil)
	c := gomcp.NewClient(&gomcp.Implementation{Name: "test-client", Version: "1"}, opts)
	if err := gomcp.AddSendingCustomMethod[*getTaskParams, *getTaskResult](c, "tasks/get"); err != nil {
		t.Fatal(err)
	}
	cs, err := c.Connect(testkit.Ctx(t, 30*time.Second), &gomcp.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestTaskBoundToSubject: with token authentication a task is its
// token's subject's: the same subject polls it from a new session,
// another subject is told it does not exist.
func TestTaskBoundToSubject(t *testing.T) {
	a, err := agent.New(context.Background(), agent.Config{Name: "greeter", Description: "greets", Model: llm.NewScripted(llm.Say("hello"))})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var handle []byte
	srv := newServer(t, server.Config{Runners: []agent.Runner{a}, Tasks: agent.NewMemoryStore(agent.MemoryStoreOptions{}),
		TokenVerifier: func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
			return &auth.TokenInfo{UserID: token, Expiration: time.Now().Add(time.Hour)}, nil
		}})
	srv.MCP().AddReceivingMiddleware(func(next gomcp.MethodHandler) gomcp.MethodHandler {
		return func(ctx context.Context, method string, req gomcp.Request) (gomcp.Result, error) {
			res, err := next(ctx, method, req)
			if method == "tools/call" && err == nil {
				b, _ := json.Marshal(res)
				mu.Lock()
				handle = b
				mu.Unlock()
			}
			return res, err
		}
	})
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	alice := httpTasksClient(t, hs.URL, "alice")
	if _, err := alice.CallTool(testkit.Ctx(t, 10*time.Second), &gomcp.CallToolParams{Name: "greeter", Arguments: map[string]any{"input": "hi"}}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	var created struct{ TaskID string }
	_ = json.Unmarshal(handle, &created)
	mu.Unlock()
	alice.Close()
	var got *getTaskResult
	testkit.WaitFor(t, 10*time.Second, "alice's task completed, polled from a new session", func() bool {
		got, err = getTask(t, httpTasksClient(t, hs.URL, "alice"), created.TaskID)
		return err == nil && got.Status == "completed"
	})
	var we *jsonrpc.Error
	if _, err := getTask(t, httpTasksClient(t, hs.URL, "bob"), created.TaskID); !errors.As(err, &we) || we.Code != -32602 {
		t.Errorf("bob polling alice's task: %v, want -32602", err)
	}
}

// slowWorker is an agent whose one call of its tool work waits for release
// (or its context), counting each call in served (if not nil), then
// answers "finished".
func slowWorker(t *testing.T, release <-chan struct{}, served *atomic.Int32) *agent.Agent {
	t.Helper()
	work := agent.NewFuncTool(agent.ToolSpec{Name: "work", ReadOnly: true},
		func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
			if served != nil {
				served.Add(1)
			}
			select {
			case <-release:
				return agent.TextResult("worked"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	worker, err := agent.New(context.Background(), agent.Config{Name: "slow", Description: "works slowly",
		Model: llm.NewScripted(llm.Calls(llm.ToolCall{ID: "1", Name: "work", Args: json.RawMessage(`{}`)}), llm.Say("finished")),
		Tools: []agent.Tool{work}})
	if err != nil {
		t.Fatal(err)
	}
	return worker
}

// TestTaskNotificationsThroughManager (issue 33): over Streamable HTTP
// the Manager listens for its task's status notifications and the server
// sends one at each change (working, input_required as the run asks
// permission, completed), so a task suggesting a poll every 30 s ends
// well within a 10 s deadline: only the notifications can wake the
// Manager's polls that soon. Over a pipe go-sdk serves the listen and
// agrees to no task (docs/tasks.md): the Manager polls, at a short
// interval here, as before.
func TestTaskNotificationsThroughManager(t *testing.T) {
	for _, c := range []struct {
		name, transport string
		stateless       bool
		poll            time.Duration
	}{
		{"http", "http", false, 30 * time.Second},
		{"stateless http", "http", true, 30 * time.Second},
		{"pipe, polled", "pipe", false, 100 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			var wrote atomic.Int32
			write := agent.NewFuncTool(agent.ToolSpec{Name: "write_note", Destructive: true, InputSchema: json.RawMessage(`{"type":"object"}`)},
				func(context.Context, json.RawMessage) (*agent.Result, error) {
					wrote.Add(1)
					return agent.TextResult("written"), nil
				})
			client := new(server.Client)
			a, err := agent.New(context.Background(), agent.Config{Name: "scribe", Description: "writes notes",
				Model: llm.NewScripted(llm.Calls(llm.ToolCall{ID: "1", Name: "write_note", Args: json.RawMessage(`{}`)}), llm.Say("done")),
				Tools: []agent.Tool{write}, Elicitor: client.Elicitor()})
			if err != nil {
				t.Fatal(err)
			}
			srv := newServer(t, server.Config{Runners: []agent.Runner{a}, Client: client, Tasks: agent.NewMemoryStore(agent.MemoryStoreOptions{}),
				Stateless: c.stateless, TaskPoll: c.poll})
			var count methodCounter
			srv.MCP().AddReceivingMiddleware(count.middleware)
			var asked atomic.Int32
			elicitor := agent.ElicitorFunc(func(context.Context, agent.Elicitation) (agent.ElicitationResult, error) {
				asked.Add(1)
				return agent.ElicitationResult{Action: agent.ElicitAccept}, nil
			})
			var m *mcp.Manager
			var rec listenRecorder
			if c.transport == "http" {
				hs := httptest.NewServer(rec.wrap(srv.Handler()))
				t.Cleanup(hs.Close)
				var err error
				m, err = mcp.New(testkit.Ctx(t, 30*time.Second), mcp.Config{Servers: []mcp.ServerConfig{{Name: "tasks", Type: "http", URL: hs.URL}},
					Elicitor: elicitor})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { m.Close() })
			} else {
				m = taskManagerOver(t, srv, elicitor, c.transport)
			}
			res, err := m.CallTool(testkit.Ctx(t, 10*time.Second), "tasks", "scribe", json.RawMessage(`{"input":"write it"}`))
			if err != nil {
				t.Fatalf("the call did not end within 10 s (its task polls every %v): %v", c.poll, err)
			}
			if res.IsError || len(res.Parts) == 0 || res.Parts[0].Text != "done" {
				t.Errorf("result %+v", res)
			}
			if asked.Load() != 1 || wrote.Load() != 1 || count.get("tasks/update") != 1 {
				t.Errorf("asked %d times, the tool ran %d times, %d tasks/update; want 1 each", asked.Load(), wrote.Load(), count.get("tasks/update"))
			}
			if c.transport != "http" {
				return
			}
			// On the wire: the acknowledgement names the task, then its
			// statuses in order, each stamped with the listen's id.
			got := rec.statuses(t)
			if len(got) < 3 || got[0] != "ack" || !slices.Contains(got, "input_required") || got[len(got)-1] != "completed" ||
				slices.Index(got, "input_required") > slices.Index(got, "completed") {
				t.Errorf("the listen carried %q; want ack, then working, input_required, ..., completed", got)
			}
		})
	}
}

// listenRecorder records the events of the subscriptions/listen
// responses a handler writes.
type listenRecorder struct {
	mu     sync.Mutex
	events []json.RawMessage
}

func (l *listenRecorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"subscriptions/listen"`)) {
				w = &recordingWriter{ResponseWriter: w, l: l}
			}
		}
		h.ServeHTTP(w, r)
	})
}

type recordingWriter struct {
	http.ResponseWriter
	l *listenRecorder
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	w.l.mu.Lock()
	for _, line := range strings.Split(string(p), "\n") {
		if v, ok := strings.CutPrefix(line, "data: "); ok {
			w.l.events = append(w.l.events, json.RawMessage(v))
		}
	}
	w.l.mu.Unlock()
	return w.ResponseWriter.Write(p)
}

func (w *recordingWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

// statuses are the recorded events: "ack" for an acknowledgement naming
// one task, a task's status for a notification; an event without the
// listen's subscription id fails the test.
func (l *listenRecorder) statuses(t *testing.T) []string {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, raw := range l.events {
		var ev struct {
			Method string `json:"method"`
			Params struct {
				Status        string `json:"status"`
				Notifications struct {
					TaskIDs []string `json:"taskIds"`
				} `json:"notifications"`
				Meta map[string]any `json:"_meta"`
			} `json:"params"`
		}
		if err := json.Unmarshal(raw, &ev); err != nil {
			t.Fatalf("event %s: %v", raw, err)
		}
		if ev.Method == "" {
			continue // the listen's result
		}
		if _, ok := ev.Params.Meta["io.modelcontextprotocol/subscriptionId"]; !ok {
			t.Errorf("event %s carries no subscription id", raw)
		}
		switch ev.Method {
		case "notifications/subscriptions/acknowledged":
			if len(ev.Params.Notifications.TaskIDs) == 1 {
				out = append(out, "ack")
			}
		case "notifications/tasks":
			out = append(out, ev.Params.Status)
		}
	}
	return out
}

// TestTaskListenRefusals: a listen for task notifications from a client
// that did not declare the extension is refused with -32021; one naming
// a task the server does not run is acknowledged naming none, and ends;
// one to a loopback address under another Host is refused (403), as
// go-sdk refuses a DNS-rebinding request.
func TestTaskListenRefusals(t *testing.T) {
	tests := []struct {
		name       string
		caps       string
		host       string
		wantCode   int
		wantStatus int
	}{
		{name: "not declared", caps: `{"extensions":{}}`, wantCode: -32021},
		{name: "unknown task", caps: `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`},
		{name: "rebound host", caps: `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`, host: "evil.example", wantStatus: http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(t, server.Config{Runners: []agent.Runner{okRunner{}}, Tasks: agent.NewMemoryStore(agent.MemoryStoreOptions{}),
				Stateless: true})
			hs := httptest.NewServer(srv.Handler())
			t.Cleanup(hs.Close)
			body := `{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{"notifications":{"taskIds":["task-nope"]},` +
				`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + tt.caps + `}}}`
			req, err := http.NewRequestWithContext(testkit.Ctx(t, 10*time.Second), http.MethodPost, hs.URL, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tt.host != "" {
				req.Host = tt.host
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			out, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantStatus != 0 {
				if resp.StatusCode != tt.wantStatus {
					t.Fatalf("status %d (%s); want %d", resp.StatusCode, out, tt.wantStatus)
				}
				return
			}
			if tt.wantCode != 0 {
				var r struct {
					Error *jsonrpc.Error `json:"error"`
				}
				if json.Unmarshal(out, &r) != nil || r.Error == nil || r.Error.Code != int64(tt.wantCode) {
					t.Fatalf("answer %s; want error %d", out, tt.wantCode)
				}
				return
			}
			if !strings.Contains(string(out), `"notifications/subscriptions/acknowledged"`) || strings.Contains(string(out), "task-nope") ||
				!strings.Contains(string(out), `"id":9,"jsonrpc":"2.0","result":{`) {
				t.Fatalf("answer %q; want an acknowledgement naming no task, then the listen's result", out)
			}
		})
	}
}
