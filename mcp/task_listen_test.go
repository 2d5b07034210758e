package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/mcp/internal/taskwire"
)

// notifyingTasks is a Streamable HTTP server of the tasks extension that
// pushes task status notifications: go-sdk serves the handshake and the
// listing (tool "work"), and it answers tools/call with a task polled at
// poll, tasks/get with the task's state, and a subscriptions/listen naming
// the task with its acknowledgement, then the task's completion as a
// notifications/tasks on the listen's stream (or, when listen is false,
// the error of an unknown method, and the task ends at its first poll).
type notifyingTasks struct {
	poll   time.Duration
	listen bool

	// ended is closed when the listen's request ends (its client closed it).
	ended chan struct{}

	mu     sync.Mutex
	status taskwire.Status
	gets   int
	acked  []string
}

const listenTaskID = "task-listened"

func (n *notifyingTasks) task() taskwire.Task {
	ttl, poll := int64(time.Hour/time.Millisecond), int64(n.poll/time.Millisecond)
	now := taskwire.Stamp(time.Now())
	t := taskwire.Task{TaskID: listenTaskID, Status: n.status, CreatedAt: now, LastUpdatedAt: now, TTLMs: &ttl, PollIntervalMs: &poll}
	if n.status == taskwire.Completed {
		t.Result = json.RawMessage(`{"content":[{"type":"text","text":"finished"}]}`)
	}
	return t
}

func (n *notifyingTasks) handler(t *testing.T) http.Handler {
	s := gomcp.NewServer(&gomcp.Implementation{Name: "notifying", Version: "1"}, &gomcp.ServerOptions{
		Capabilities: &gomcp.ServerCapabilities{Extensions: map[string]any{taskwire.Extension: map[string]any{}}}})
	s.AddTool(&gomcp.Tool{Name: "work", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
			return nil, fmt.Errorf("answered by the task")
		})
	sdk := gomcp.NewStreamableHTTPHandler(func(*http.Request) *gomcp.Server { return s }, nil)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			sdk.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Error(err)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		_ = json.Unmarshal(body, &req)
		answer := func(result any) {
			w.Header().Set("Content-Type", "application/json")
			raw, _ := json.Marshal(result)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, raw)
		}
		n.mu.Lock()
		defer n.mu.Unlock()
		switch req.Method {
		case "tools/call":
			n.status = taskwire.Working
			answer(&taskwire.TaskResult{ResultType: taskwire.ResultTask, Task: n.task()})
		case taskwire.MethodGet:
			n.gets++
			if !n.listen {
				n.status = taskwire.Completed // without notifications, a poll sees the end
			}
			answer(&taskwire.TaskResult{ResultType: taskwire.ResultComplete, Task: n.task()})
		case taskwire.MethodListen:
			if !n.listen {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, req.ID)
				return
			}
			var p taskwire.ListenParams
			if err := json.Unmarshal(req.Params, &p); err != nil {
				t.Errorf("listen params %s: %v", req.Params, err)
			}
			n.acked = p.Notifications.TaskIDs
			w.Header().Set("Content-Type", "text/event-stream")
			meta := map[string]any{"io.modelcontextprotocol/subscriptionId": json.RawMessage(req.ID)}
			ack, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": taskwire.NotificationAck,
				"params": map[string]any{"notifications": p.Notifications, "_meta": meta}})
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", ack)
			// The task ends now: only the notification tells the client
			// before its next poll.
			n.status = taskwire.Completed
			task := n.task()
			note, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": taskwire.NotificationTasks, "params": task})
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", note)
			w.(http.Flusher).Flush()
			n.mu.Unlock()
			<-r.Context().Done() // the stream lasts until the client ends it
			close(n.ended)
			n.mu.Lock()
		default:
			n.mu.Unlock()
			sdk.ServeHTTP(w, r)
			n.mu.Lock()
		}
	})
}

// TestTaskNotificationsWakeThePoll (issue 33): a call answered with a task
// listens for its status notifications (subscriptions/listen naming the
// task) on a server that declares the extension, and a notifications/tasks
// makes it poll at once: the call ends well before the task's poll
// interval of 30 s, after one tasks/get. A server that does not know the
// method is polled at its interval as before.
func TestTaskNotificationsWakeThePoll(t *testing.T) {
	tests := []struct {
		name     string
		poll     time.Duration
		listen   bool
		within   time.Duration
		wantGets int // at most
	}{
		{name: "notified", poll: 30 * time.Second, listen: true, within: 10 * time.Second, wantGets: 1},
		{name: "listen unknown, polled", poll: 50 * time.Millisecond, listen: false, within: 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := &notifyingTasks{poll: tt.poll, listen: tt.listen, ended: make(chan struct{})}
			hs := httptest.NewServer(srv.handler(t))
			t.Cleanup(hs.Close) // after the Manager's Close (cleanups run last first)
			m := newManager(t, quickConfig(ServerConfig{Name: "n", Type: "http", URL: hs.URL}))
			a, err := agent.New(context.Background(), agent.Config{Toolsets: []agent.Toolset{m.Toolset()}, Permissions: agent.AllowAll(),
				Model: llm.NewScripted(llm.Calls(llm.CallTool("c1", "mcp__n__work", map[string]string{})), llm.Say("done"))})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			var got string
			for ev, err := range a.Stream(testkit.Ctx(t, tt.within), "go") {
				if err != nil {
					t.Fatalf("the call did not end within %v: %v", tt.within, err)
				}
				if ev.Type == agent.EventToolFinished && ev.Result != nil {
					got += ev.Result.Text()
				}
			}
			took := time.Since(start)
			if !strings.Contains(got, "finished") {
				t.Fatalf("tool results %q; want the task's result", got)
			}
			srv.mu.Lock()
			defer srv.mu.Unlock()
			if tt.listen && (len(srv.acked) != 1 || srv.acked[0] != listenTaskID) {
				t.Errorf("the listen named %q; want the task %q", srv.acked, listenTaskID)
			}
			if tt.wantGets > 0 && srv.gets > tt.wantGets {
				t.Errorf("%d tasks/get; want at most %d (the notification's)", srv.gets, tt.wantGets)
			}
			if tt.listen && took >= tt.poll {
				t.Errorf("the call took %v, past the poll interval %v", took, tt.poll)
			}
			if tt.listen {
				// The call over, its listen's stream is closed (the
				// Manager is still open).
				select {
				case <-srv.ended:
				case <-time.After(10 * time.Second):
					t.Error("the listen's stream was not closed after the call")
				}
			}
		})
	}
}

// scriptConn is a connection that reads msgs in order, then blocks.
type scriptConn struct {
	gomcp.Connection
	msgs []jsonrpc.Message
}

func (c *scriptConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if len(c.msgs) == 0 {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	m := c.msgs[0]
	c.msgs = c.msgs[1:]
	return m, nil
}

// TestTaskConnNotices: on the connections that are ours (stdio,
// in-process, WebSocket), a notifications/tasks reaches onNotice with its
// task and goes no further (go-sdk knows no such notification); an
// invalid one is dropped unseen; other messages pass.
func TestTaskConnNotices(t *testing.T) {
	note := func(params string) jsonrpc.Message {
		return &jsonrpc.Request{Method: taskwire.NotificationTasks, Params: json.RawMessage(params)}
	}
	valid := `{"taskId":"t1","status":"working","createdAt":"x","lastUpdatedAt":"x","ttlMs":null}`
	other := &jsonrpc.Request{Method: "notifications/progress", Params: json.RawMessage(`{"progressToken":"p","progress":1}`)}
	tests := []struct {
		name string
		msgs []jsonrpc.Message
		want []string // tasks noticed
	}{
		{name: "notice then other", msgs: []jsonrpc.Message{note(valid), other}, want: []string{"t1"}},
		{name: "invalid notice dropped", msgs: []jsonrpc.Message{note(`{"taskId":""}`), other}},
		{name: "other only", msgs: []jsonrpc.Message{other}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			c := &taskConn{Connection: &scriptConn{msgs: tt.msgs}, calls: map[jsonrpc.ID]string{},
				onNotice: func(task string) { got = append(got, task) }}
			msg, err := c.Read(context.Background())
			if err != nil || msg != other {
				t.Fatalf("Read = %v, %v; want the progress notification", msg, err)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("noticed %q; want %q", got, tt.want)
			}
		})
	}
}
