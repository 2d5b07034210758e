package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
)

// The interop matrix: our client against the JS SDK's servers (1.0 strict,
// 1.0 with its 0.3 compatibility layer, 0.3), and the JS SDK's clients (1.0
// and 0.3) against our server, on JSON-RPC and HTTP+JSON, for every
// operation. Each cell passes, or is skipped as unsupported by the peer's
// protocol version with the reason (matrixUnsupported). One Node process
// per server kind serves all of its cells.

// matrixOps are the operations of every row, in order.
var matrixOps = []string{"card", "send", "stream", "get", "list", "cancel", "subscribe",
	"push-create", "push-get", "push-list", "push-delete", "unknown-task", "input-required"}

// matrixUnsupported names the cells a peer's protocol version cannot run
// ("<row>/<op>", the row without its binding, or "<row>/<binding>/<op>"),
// with the reason.
var matrixUnsupported = map[string]string{
	"js-0.3/list":               "A2A 0.3 has no ListTasks (tasks/list was added in 1.0)",
	"js-1.0-compat-as-0.3/list": "A2A 0.3 has no ListTasks (tasks/list was added in 1.0)",
}

// serverRow is a JS server our client talks to.
type serverRow struct {
	name   string
	script string
	args   []string
	only03 bool // talk to it through its 0.3 interfaces only
	echo   string
	answer string // the text the answered question completes with
	ask    string // the question it asks
}

var serverRows = []serverRow{
	{name: "js-1.0", script: "a2a-js-server.mjs", echo: "echo: ", answer: "answer: Lisbon", ask: "Which city?"},
	{name: "js-1.0-compat", script: "a2a-js-server.mjs", args: []string{"compat"}, echo: "echo: ", answer: "answer: Lisbon", ask: "Which city?"},
	{name: "js-1.0-compat-as-0.3", script: "a2a-js-server.mjs", args: []string{"compat"}, only03: true, echo: "echo: ", answer: "answer: Lisbon", ask: "Which city?"},
	{name: "js-0.3", script: "a2a-v03-server.mjs", echo: "v03 echo: ", answer: "v03 answer: Lisbon", ask: "Which year?"},
}

// nodePool starts each npm server once per test and hands out its port.
type nodePool struct {
	t     *testing.T
	mu    sync.Mutex
	ports map[string]string
}

func (p *nodePool) port(script string, args ...string) string {
	key := script + " " + strings.Join(args, " ")
	p.mu.Lock()
	defer p.mu.Unlock()
	if port, ok := p.ports[key]; ok {
		return port
	}
	port := startNode(p.t, script, args...)
	p.ports[key] = port
	return port
}

func matrixSkip(t *testing.T, row, binding, op string) {
	t.Helper()
	for _, k := range []string{row + "/" + binding + "/" + op, row + "/" + op} {
		if why, ok := matrixUnsupported[k]; ok {
			t.Skip("unsupported by the peer's protocol version: " + why)
		}
	}
}

// TestInteropMatrix runs every cell of the matrix.
func TestInteropMatrix(t *testing.T) {
	needNode(t)
	if !nodeAvailable() {
		t.Skip("node is not installed: the interop matrix needs the npm peers (`make npm`)")
	}
	pool := &nodePool{t: t, ports: map[string]string{}}
	t.Run("their-client", func(t *testing.T) {
		_, hs := newWorker(t, ServerConfig{ChunkBytes: 8, PushNotifications: true, AllowPrivatePush: true})
		rec := &pathRecorder{h: hs.Config.Handler}
		front := httptest.NewServer(rec)
		t.Cleanup(front.Close)
		hook := newHookServer(t, func(string, string) {})
		for _, row := range clientRows {
			for _, b := range []string{"JSONRPC", "HTTP+JSON"} {
				t.Run(row.name+"/"+b, func(t *testing.T) {
					rec.reset()
					out := runNode(t, row.script, front.URL, b, hook)
					theirClientRow(t, b, out, rec)
				})
			}
		}
	})
	t.Run("our-client", func(t *testing.T) {
		for _, row := range serverRows {
			for _, b := range []string{"JSONRPC", "HTTP+JSON"} {
				t.Run(row.name+"/"+b, func(t *testing.T) {
					clientRow(t, row, b, "http://127.0.0.1:"+pool.port(row.script, row.args...))
				})
			}
		}
	})
}

// only03Card returns base's 1.0 card reduced to its 0.3 interfaces.
func only03Card(t *testing.T, base string) *a2ago.AgentCard {
	t.Helper()
	hc := &http.Client{Transport: &peerTransport{base: http.DefaultTransport,
		headers: http.Header{a2ago.SvcParamVersion: {"1.0"}}}}
	card, err := resolveCard(ctxT(t), hc, base, "")
	if err != nil {
		t.Fatal(err)
	}
	var ifs []*a2ago.AgentInterface
	for _, i := range card.SupportedInterfaces {
		if strings.HasPrefix(string(i.ProtocolVersion), "0.3") {
			ifs = append(ifs, i)
		}
	}
	if len(ifs) == 0 {
		t.Fatalf("the compat card lists no 0.3 interface: %+v", card.SupportedInterfaces)
	}
	card.SupportedInterfaces = ifs
	return card
}

// clientRow runs our client against one server over one binding.
func clientRow(t *testing.T, row serverRow, binding, base string) {
	ctx := ctxT(t)
	peer := Peer{Name: "w", URL: base, PreferREST: binding == "HTTP+JSON"}
	if row.only03 {
		peer.Card = only03Card(t, base)
	}
	seen := &lastRequest{}
	open := func(p Peer) *Toolset {
		ts, err := NewToolset(ctx, ToolsetConfig{Peers: []Peer{p}, Policy: fastPolicy(), PollInterval: 20 * time.Millisecond,
			HTTPClient: &http.Client{Transport: seen}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ts.Close() })
		return ts
	}
	streaming := open(peer)
	blocking := peer
	blocking.NoStreaming = true
	blockingTS := open(blocking)
	c, _ := streaming.Client("w")
	call := func(t *testing.T, ts *Toolset, msg string) string {
		t.Helper()
		tools, _ := ts.Tools(ctx)
		b, _ := json.Marshal(map[string]string{"message": msg})
		res, err := tools[0].Call(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		return res.Text()
	}
	cell := func(op string, fn func(t *testing.T)) {
		t.Run(op, func(t *testing.T) {
			matrixSkip(t, row.name, binding, op)
			fn(t)
		})
	}
	cell("card", func(t *testing.T) {
		card, ok := streaming.Card("w")
		if !ok || card.Name == "" {
			t.Fatalf("card = %+v", card)
		}
		want := "1.0"
		if row.only03 || row.script == "a2a-v03-server.mjs" {
			want = "0.3"
		}
		found := false
		for _, i := range card.SupportedInterfaces {
			found = found || (string(i.ProtocolBinding) == binding && strings.HasPrefix(string(i.ProtocolVersion), want))
		}
		if !found {
			t.Fatalf("no %s %s interface: %+v", binding, want, card.SupportedInterfaces)
		}
		// The client chose that interface: a call goes to its path with
		// its version.
		_, _ = c.GetTask(ctx, &a2ago.GetTaskRequest{ID: "probe"})
		version, path := seen.get()
		if !strings.HasPrefix(version, want) || strings.Contains(path, "/rest") != (binding == "HTTP+JSON") {
			t.Fatalf("the call went to %s with A2A-Version %q; want %s %s", path, version, binding, want)
		}
	})
	cell("send", func(t *testing.T) {
		if got := call(t, blockingTS, "hello matrix"); !strings.Contains(got, row.echo+"hello matrix") {
			t.Fatalf("got %q", got)
		}
	})
	cell("stream", func(t *testing.T) {
		if got := call(t, streaming, "chunks 4"); !strings.Contains(got, "chunk0;chunk1;chunk2;chunk3;") {
			t.Fatalf("artifact chunks not reassembled: %q", got)
		}
	})
	var done *a2ago.Task
	cell("get", func(t *testing.T) {
		res, err := c.SendMessage(ctx, textMsg("hi get"))
		if err != nil {
			t.Fatal(err)
		}
		task, ok := res.(*a2ago.Task)
		if !ok {
			t.Fatalf("answer %T", res)
		}
		done = task
		got, err := c.GetTask(ctx, &a2ago.GetTaskRequest{ID: task.ID})
		if err != nil || got.ID != task.ID || got.Status.State != a2ago.TaskStateCompleted {
			t.Fatalf("get = %+v, %v", got, err)
		}
	})
	cell("list", func(t *testing.T) {
		if done == nil {
			t.Fatal("no task from the get cell")
		}
		l, err := c.ListTasks(ctx, &a2ago.ListTasksRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(l.Tasks, func(tk *a2ago.Task) bool { return tk.ID == done.ID }) {
			t.Fatalf("task %s not among %d listed", done.ID, len(l.Tasks))
		}
	})
	cancelAndSubscribe(t, ctx, c, cell)
	pushConfigs(t, ctx, c, cell)
	cell("unknown-task", func(t *testing.T) {
		_, err := c.GetTask(ctx, &a2ago.GetTaskRequest{ID: "00000000-0000-0000-0000-000000000000"})
		if !errors.Is(err, a2ago.ErrTaskNotFound) {
			t.Fatalf("err = %v", err)
		}
		if fe := classify(err, "w", "", "get task"); fe.Kind != failure.NotFound || fe.Retryable {
			t.Fatalf("classified as %v (retryable %v)", fe.Kind, fe.Retryable)
		}
	})
	cell("input-required", func(t *testing.T) {
		var asked []string
		el := agent.ElicitorFunc(func(ctx context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
			asked = append(asked, e.Message)
			return agent.ElicitationResult{Action: agent.ElicitAccept, Content: map[string]any{"text": "Lisbon"}}, nil
		})
		for _, ts := range []*Toolset{streaming, blockingTS} {
			asked = nil
			ans, err := delegator(t, ts, el).Run(ctx, "ask where")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(ans.Text, row.answer) || len(asked) != 1 || asked[0] != row.ask {
				t.Fatalf("answer %q, questions %v", ans.Text, asked)
			}
		}
	})
}

// lastRequest is a transport that records the last request's path and
// A2A-Version header.
type lastRequest struct {
	mu            sync.Mutex
	version, path string
}

func (l *lastRequest) RoundTrip(r *http.Request) (*http.Response, error) {
	l.mu.Lock()
	l.version, l.path = r.Header.Get(a2ago.SvcParamVersion), r.URL.Path
	l.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

func (l *lastRequest) get() (version, path string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.version, l.path
}

// cancelAndSubscribe runs the cancel and subscribe cells on one slow task.
func cancelAndSubscribe(t *testing.T, ctx context.Context, c *a2aclient.Client, cell func(string, func(*testing.T))) {
	cell("subscribe", func(t *testing.T) {
		id := slowTask(t, ctx, c)
		first := make(chan a2ago.Event, 1)
		type outcome struct {
			events []a2ago.Event
			err    error
		}
		ended := make(chan outcome, 1)
		go func() {
			var o outcome
			for ev, err := range c.SubscribeToTask(ctx, &a2ago.SubscribeToTaskRequest{ID: id}) {
				if err != nil {
					o.err = err
					break
				}
				if len(o.events) == 0 {
					first <- ev
				}
				o.events = append(o.events, ev)
			}
			close(first)
			ended <- o
		}()
		ev, ok := <-first
		if !ok {
			o := <-ended
			t.Fatalf("the subscription yielded nothing: %v", o.err)
		}
		if _, ok := ev.(*a2ago.Task); !ok {
			t.Errorf("first subscribed event is %T", ev)
		}
		if _, err := c.CancelTask(ctx, &a2ago.CancelTaskRequest{ID: id}); err != nil {
			t.Fatal(err)
		}
		var o outcome
		select {
		case o = <-ended:
		case <-time.After(20 * time.Second):
			t.Fatal("the subscription did not end with the task")
		}
		last, ok := o.events[len(o.events)-1].(*a2ago.TaskStatusUpdateEvent)
		if !ok || last.Status.State != a2ago.TaskStateCanceled {
			t.Fatalf("last subscribed event %#v (err %v)", o.events[len(o.events)-1], o.err)
		}
	})
	cell("cancel", func(t *testing.T) {
		id := slowTask(t, ctx, c)
		ct, err := c.CancelTask(ctx, &a2ago.CancelTaskRequest{ID: id})
		if err != nil || ct.ID != id || ct.Status.State != a2ago.TaskStateCanceled {
			t.Fatalf("cancel = %+v, %v", ct, err)
		}
		got, err := c.GetTask(ctx, &a2ago.GetTaskRequest{ID: id})
		if err != nil || got.Status.State != a2ago.TaskStateCanceled {
			t.Fatalf("after cancel, get = %+v, %v", got, err)
		}
	})
}

// pushConfigs runs the push-config cells on one slow task.
func pushConfigs(t *testing.T, ctx context.Context, c *a2aclient.Client, cell func(string, func(*testing.T))) {
	hook := newHookServer(t, func(string, string) {})
	var id a2ago.TaskID
	var pc *a2ago.PushConfig
	defer func() {
		if id != "" {
			_, _ = c.CancelTask(ctx, &a2ago.CancelTaskRequest{ID: id})
		}
	}()
	need := func(t *testing.T) {
		if pc == nil {
			t.Fatal("no push config from the push-create cell")
		}
	}
	cell("push-create", func(t *testing.T) {
		id = slowTask(t, ctx, c)
		var err error
		pc, err = c.CreateTaskPushConfig(ctx, &a2ago.PushConfig{TaskID: id, ID: "cfg-1", URL: hook, Token: "tok"})
		if err != nil || pc.ID == "" || pc.URL != hook {
			pc = nil
			t.Fatalf("create = %+v, %v", pc, err)
		}
	})
	cell("push-get", func(t *testing.T) {
		need(t)
		g, err := c.GetTaskPushConfig(ctx, &a2ago.GetTaskPushConfigRequest{TaskID: id, ID: pc.ID})
		if err != nil || g.URL != hook || g.ID != pc.ID {
			t.Fatalf("get = %+v, %v", g, err)
		}
	})
	cell("push-list", func(t *testing.T) {
		need(t)
		l, err := c.ListTaskPushConfigs(ctx, &a2ago.ListTaskPushConfigRequest{TaskID: id})
		if err != nil || len(l) != 1 || l[0].ID != pc.ID {
			t.Fatalf("list = %v, %v", l, err)
		}
	})
	cell("push-delete", func(t *testing.T) {
		need(t)
		if err := c.DeleteTaskPushConfig(ctx, &a2ago.DeleteTaskPushConfigRequest{TaskID: id, ID: pc.ID}); err != nil {
			t.Fatal(err)
		}
		l, err := c.ListTaskPushConfigs(ctx, &a2ago.ListTaskPushConfigRequest{TaskID: id})
		if err != nil || len(l) != 0 {
			t.Fatalf("after delete, list = %v, %v", l, err)
		}
	})
}
