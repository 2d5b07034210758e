package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/switchboard-dev/switchboard/agent"
)

// TestOurClientVsJSServer: our client against an @a2a-js/sdk 1.3.0 server,
// over JSON-RPC and HTTP+JSON: send, stream with chunked artifacts, get,
// list, cancel, subscribe, task-not-found.
func TestOurClientVsJSServer(t *testing.T) {
	port := startNode(t, "a2a-js-server.mjs")
	base := "http://127.0.0.1:" + port
	for _, rest := range []bool{false, true} {
		name := map[bool]string{false: "JSONRPC", true: "HTTP+JSON"}[rest]
		t.Run(name, func(t *testing.T) {
			ctx := ctxT(t)
			ts, err := NewToolset(ctx, ToolsetConfig{Peers: []Peer{{Name: "js", URL: base, PreferREST: rest}}})
			if err != nil {
				t.Fatal(err)
			}
			defer ts.Close()
			tools, _ := ts.Tools(ctx)
			call := func(msg string) string {
				t.Helper()
				b, _ := json.Marshal(map[string]string{"message": msg})
				res, err := tools[0].Call(ctx, b)
				if err != nil {
					t.Fatal(err)
				}
				return res.Text()
			}
			t.Run("send", func(t *testing.T) {
				if got := call("hello js"); !strings.Contains(got, "echo: hello js") {
					t.Fatalf("got %q", got)
				}
			})
			t.Run("stream chunked artifact", func(t *testing.T) {
				if got := call("chunks 4"); !strings.Contains(got, "chunk0;chunk1;chunk2;chunk3;") {
					t.Fatalf("got %q", got)
				}
			})
			c, _ := ts.Client("js")
			t.Run("blocking send get list", func(t *testing.T) {
				res, err := c.SendMessage(ctx, textMsg("hi"))
				if err != nil {
					t.Fatal(err)
				}
				task := res.(*a2ago.Task)
				got, err := c.GetTask(ctx, &a2ago.GetTaskRequest{ID: task.ID})
				if err != nil || got.Status.State != a2ago.TaskStateCompleted {
					t.Fatalf("get = %+v, %v", got, err)
				}
				l, err := c.ListTasks(ctx, &a2ago.ListTasksRequest{})
				if err != nil {
					t.Fatal(err)
				}
				found := false
				for _, tk := range l.Tasks {
					found = found || tk.ID == task.ID
				}
				if !found {
					t.Fatalf("task not listed: %d tasks", len(l.Tasks))
				}
			})
			t.Run("cancel and subscribe", func(t *testing.T) {
				m := textMsg("slow")
				m.Config = &a2ago.SendMessageConfig{ReturnImmediately: true}
				res, err := c.SendMessage(ctx, m)
				if err != nil {
					t.Fatal(err)
				}
				id := res.(*a2ago.Task).ID
				sub := make(chan []a2ago.Event, 1)
				started := make(chan struct{})
				go func() {
					var evs []a2ago.Event
					for ev, err := range c.SubscribeToTask(ctx, &a2ago.SubscribeToTaskRequest{ID: id}) {
						if err != nil {
							break
						}
						if len(evs) == 0 {
							close(started)
						}
						evs = append(evs, ev)
					}
					if len(evs) == 0 {
						close(started)
					}
					sub <- evs
				}()
				<-started
				ct, err := c.CancelTask(ctx, &a2ago.CancelTaskRequest{ID: id})
				if err != nil || ct.Status.State != a2ago.TaskStateCanceled {
					t.Fatalf("cancel = %+v, %v", ct, err)
				}
				evs := <-sub
				if len(evs) == 0 {
					t.Fatal("subscription yielded nothing")
				}
				if _, ok := evs[0].(*a2ago.Task); !ok {
					t.Errorf("first subscribed event is %T", evs[0])
				}
				if st, ok := evs[len(evs)-1].(*a2ago.TaskStatusUpdateEvent); !ok || st.Status.State != a2ago.TaskStateCanceled {
					t.Errorf("last subscribed event %#v", evs[len(evs)-1])
				}
			})
			t.Run("task not found", func(t *testing.T) {
				_, err := c.GetTask(ctx, &a2ago.GetTaskRequest{ID: "00000000-0000-0000-0000-000000000000"})
				if !errors.Is(err, a2ago.ErrTaskNotFound) {
					t.Fatalf("err = %v", err)
				}
			})
		})
	}
}

// TestJSClientVsOurServer: an @a2a-js/sdk 1.3.0 client against our server,
// over both bindings: send, stream, get, list, cancel, subscribe,
// input-required, task-not-found.
func TestJSClientVsOurServer(t *testing.T) {
	needNode(t)
	_, hs := newWorker(t, ServerConfig{ChunkBytes: 8})
	for _, b := range []string{"JSONRPC", "HTTP+JSON"} {
		t.Run(b, func(t *testing.T) {
			out := runNode(t, "a2a-js-client.mjs", hs.URL, b)
			checks := map[string]bool{}
			for _, line := range strings.Split(out, "\n") {
				var r struct {
					Check  string `json:"check"`
					OK     bool   `json:"ok"`
					Detail any    `json:"detail"`
				}
				if json.Unmarshal([]byte(line), &r) != nil {
					continue
				}
				checks[r.Check] = r.OK
				if !r.OK {
					t.Errorf("%s: %v", r.Check, r.Detail)
				}
			}
			for _, c := range []string{"send", "stream", "stream-chunks", "get", "list", "cancel+subscribe", "input-required", "task-not-found"} {
				if _, ok := checks[c]; !ok {
					t.Errorf("check %s did not run; output:\n%s", c, out)
				}
			}
		})
	}
}

// TestV03PeerThroughCompat: a 0.3 peer (@a2a-js/sdk 0.3.14) through
// a2a-go's compatibility layer: its 0.3 card is read, the 0.3 JSON-RPC
// binding chosen, the stream's chunks assembled.
func TestV03PeerThroughCompat(t *testing.T) {
	port := startNode(t, "a2a-v03-server.mjs")
	ctx := ctxT(t)
	for _, stream := range []bool{true, false} {
		ts, err := NewToolset(ctx, ToolsetConfig{Peers: []Peer{{Name: "old", URL: "http://127.0.0.1:" + port, NoStreaming: !stream}}})
		if err != nil {
			t.Fatal(err)
		}
		card, _ := ts.Card("old")
		if card.SupportedInterfaces[0].ProtocolVersion != "0.3.0" && card.SupportedInterfaces[0].ProtocolVersion != "0.3" {
			t.Fatalf("interfaces = %+v", card.SupportedInterfaces[0])
		}
		tools, _ := ts.Tools(ctx)
		res, err := tools[0].Call(ctx, json.RawMessage(`{"message":"from go"}`))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Text(), "v03 echo: from go") {
			t.Fatalf("stream=%v: %q", stream, res.Text())
		}
		ts.Close()
	}
}

// TestInputRequiredFromJSServer: the JS peer's input-required becomes an
// elicitation in our agent run, and the answer continues the JS task.
func TestInputRequiredFromJSServer(t *testing.T) {
	port := startNode(t, "a2a-js-server.mjs")
	ctx := ctxT(t)
	ts, err := NewToolset(ctx, ToolsetConfig{Peers: []Peer{{Name: "w", URL: "http://127.0.0.1:" + port}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	var asked []string
	el := agent.ElicitorFunc(func(ctx context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
		asked = append(asked, e.Message)
		return agent.ElicitationResult{Action: agent.ElicitAccept, Content: map[string]any{"text": "Lisbon"}}, nil
	})
	ans, err := delegator(t, ts, el).Run(ctx, "ask where")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ans.Text, "answer: Lisbon") || len(asked) != 1 || asked[0] != "Which city?" {
		t.Fatalf("answer %q, questions %v", ans.Text, asked)
	}
}
