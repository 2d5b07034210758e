package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
)

// clientFor returns an a2a-go client of the server over one binding.
func clientFor(t *testing.T, base string, b a2ago.TransportProtocol, hdr http.Header) *a2aclient.Client {
	t.Helper()
	ctx := ctxT(t)
	hc := &http.Client{Transport: &peerTransport{base: http.DefaultTransport, headers: hdr}}
	card, err := resolveCard(ctx, hc, base, "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2ago.TransportProtocol{b}}),
		a2aclient.WithJSONRPCTransport(hc), a2aclient.WithRESTTransport(hc))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

func textMsg(s string) *a2ago.SendMessageRequest {
	return &a2ago.SendMessageRequest{Message: a2ago.NewMessage(a2ago.MessageRoleUser, a2ago.NewTextPart(s))}
}

func artifactText(t *a2ago.Task) string {
	var b strings.Builder
	for _, a := range t.Artifacts {
		b.WriteString(partsText(a))
	}
	return b.String()
}

var bindings = []a2ago.TransportProtocol{a2ago.TransportProtocolJSONRPC, a2ago.TransportProtocolHTTPJSON}

// TestCard covers CARD-DISC-001, CARD-STRUCT-001, CARD-PROTO-001,
// CARD-PROTO-002, BIND-FIELD-001 and CARD-CACHE-001.
func TestCard_CARD_DISC_001_CARD_STRUCT_001_CARD_PROTO_001_002_BIND_FIELD_001(t *testing.T) {
	_, hs := newWorker(t, ServerConfig{})
	for _, path := range []string{cardPath, legacyCardPath} {
		resp, err := http.Get(hs.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if resp.Header.Get("Cache-Control") == "" {
			t.Errorf("CARD-CACHE-001: no Cache-Control")
		}
		var raw map[string]any
		if err := json.Unmarshal(body, &raw); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"name", "description", "version", "supportedInterfaces", "capabilities", "defaultInputModes", "defaultOutputModes", "skills"} {
			if _, ok := raw[f]; !ok {
				t.Errorf("CARD-STRUCT-001: card lacks %q", f)
			}
		}
		card, err := parseCard(body)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, in := range card.SupportedInterfaces {
			if in.URL == "" || in.ProtocolBinding == "" || in.ProtocolVersion == "" {
				t.Errorf("CARD-PROTO-002: incomplete interface %+v", in)
			}
			got[string(in.ProtocolBinding)+"/"+string(in.ProtocolVersion)] = true
		}
		for _, want := range []string{"JSONRPC/1.0", "HTTP+JSON/1.0", "JSONRPC/0.3"} {
			if !got[want] {
				t.Errorf("BIND-FIELD-001: interface %s not declared (%v)", want, got)
			}
		}
		if card.Name != "worker" || len(card.Skills) != 4 || !card.Capabilities.Streaming {
			t.Errorf("card = %+v", card)
		}
	}
}

// TestCoreOperations runs the core operations over both bindings
// (BIND-EQUIV-001/002/003).
func TestCoreOperations_BIND_EQUIV_001_002_003(t *testing.T) {
	for _, b := range bindings {
		t.Run(string(b), func(t *testing.T) {
			_, hs := newWorker(t, ServerConfig{})
			ctx := ctxT(t)
			c := clientFor(t, hs.URL, b, nil)
			var ids []a2ago.TaskID
			t.Run("CORE-SEND-001 CORE-MULTI-001a CORE-MULTI-003 CORE-EXECUTION-MODE-001", func(t *testing.T) {
				for i := 0; i < 3; i++ {
					res, err := c.SendMessage(ctx, textMsg("research topic"))
					if err != nil {
						t.Fatal(err)
					}
					task, ok := res.(*a2ago.Task)
					if !ok || task.Status.State != a2ago.TaskStateCompleted || task.ContextID == "" {
						t.Fatalf("result = %#v", res)
					}
					if !strings.Contains(artifactText(task), "done: notes on topic") {
						t.Fatalf("artifacts = %q", artifactText(task))
					}
					for _, id := range ids {
						if id == task.ID {
							t.Fatal("task ids repeat")
						}
					}
					ids = append(ids, task.ID)
				}
			})
			t.Run("CORE-GET-001 CORE-HIST-002", func(t *testing.T) {
				one := 1
				task, err := c.GetTask(ctx, &a2ago.GetTaskRequest{ID: ids[0], HistoryLength: &one})
				if err != nil || task.Status.State != a2ago.TaskStateCompleted || len(task.History) > 1 {
					t.Fatalf("task = %+v, %v", task, err)
				}
			})
			t.Run("CORE-GET-002", func(t *testing.T) {
				_, err := c.GetTask(ctx, &a2ago.GetTaskRequest{ID: "no-such-task"})
				if !errors.Is(err, a2ago.ErrTaskNotFound) {
					t.Fatalf("err = %v", err)
				}
			})
			t.Run("CORE-LIST-002 CORE-LIST-003 CORE-LIST-004 CORE-LIST-005", func(t *testing.T) {
				p1, err := c.ListTasks(ctx, &a2ago.ListTasksRequest{PageSize: 2})
				if err != nil {
					t.Fatal(err)
				}
				if len(p1.Tasks) != 2 || p1.NextPageToken == "" {
					t.Fatalf("page 1 = %d tasks, token %q", len(p1.Tasks), p1.NextPageToken)
				}
				for _, tk := range p1.Tasks {
					if len(tk.Artifacts) != 0 {
						t.Error("CORE-LIST-005: artifacts listed without includeArtifacts")
					}
				}
				p2, err := c.ListTasks(ctx, &a2ago.ListTasksRequest{PageSize: 2, PageToken: p1.NextPageToken, IncludeArtifacts: true})
				if err != nil {
					t.Fatal(err)
				}
				if p2.NextPageToken != "" || len(p2.Tasks) == 0 || len(p2.Tasks[0].Artifacts) == 0 {
					t.Fatalf("page 2 = %+v", p2)
				}
				all := append(p1.Tasks, p2.Tasks...)
				for i := 1; i < len(all); i++ {
					if all[i].Status.Timestamp.After(*all[i-1].Status.Timestamp) {
						t.Errorf("CORE-LIST-003: not sorted by status time descending")
					}
				}
			})
			t.Run("CORE-SEND-002", func(t *testing.T) {
				m := textMsg("again")
				m.Message.TaskID = ids[0]
				if _, err := c.SendMessage(ctx, m); err == nil {
					t.Fatal("a message to a completed task was accepted")
				}
			})
			t.Run("CORE-SEND-003", func(t *testing.T) {
				m := &a2ago.SendMessageRequest{Message: a2ago.NewMessage(a2ago.MessageRoleUser, a2ago.NewFileURLPart("https://example.com/x.png", "image/png"))}
				if _, err := c.SendMessage(ctx, m); !errors.Is(err, a2ago.ErrUnsupportedContentType) {
					t.Fatalf("err = %v", err)
				}
			})
			t.Run("CORE-MULTI-004", func(t *testing.T) {
				m := textMsg("hi")
				m.Message.TaskID = "unknown-task"
				if _, err := c.SendMessage(ctx, m); !errors.Is(err, a2ago.ErrTaskNotFound) {
					t.Fatalf("err = %v", err)
				}
			})
			t.Run("CORE-CANCEL-001 CORE-EXECUTION-MODE-002 STREAM-SUB-001 STREAM-SUB-002", func(t *testing.T) {
				m := textMsg("slow work")
				m.Config = &a2ago.SendMessageConfig{ReturnImmediately: true}
				res, err := c.SendMessage(ctx, m)
				if err != nil {
					t.Fatal(err)
				}
				task := res.(*a2ago.Task)
				if task.Status.State.Terminal() {
					t.Fatalf("non-blocking send returned a terminal task")
				}
				var events []a2ago.Event
				var wg sync.WaitGroup
				wg.Add(1)
				subscribed := make(chan struct{})
				go func() {
					defer wg.Done()
					first := true
					for ev, err := range c.SubscribeToTask(ctx, &a2ago.SubscribeToTaskRequest{ID: task.ID}) {
						if err != nil {
							t.Error(err)
							return
						}
						events = append(events, ev)
						if first {
							close(subscribed)
							first = false
						}
					}
				}()
				<-subscribed
				ct, err := c.CancelTask(ctx, &a2ago.CancelTaskRequest{ID: task.ID})
				if err != nil || ct.Status.State != a2ago.TaskStateCanceled {
					t.Fatalf("cancel = %+v, %v", ct, err)
				}
				wg.Wait()
				if _, ok := events[0].(*a2ago.Task); !ok {
					t.Errorf("STREAM-SUB-001: first event is %T", events[0])
				}
				last := events[len(events)-1]
				if st, ok := last.(*a2ago.TaskStatusUpdateEvent); !ok || st.Status.State != a2ago.TaskStateCanceled {
					t.Errorf("STREAM-SUB-002: last event %#v", last)
				}
			})
			t.Run("CORE-CANCEL-002", func(t *testing.T) {
				if _, err := c.CancelTask(ctx, &a2ago.CancelTaskRequest{ID: ids[0]}); !errors.Is(err, a2ago.ErrTaskNotCancelable) {
					t.Fatalf("err = %v", err)
				}
			})
			t.Run("CORE-CANCEL-003 STREAM-SUB-004", func(t *testing.T) {
				if _, err := c.CancelTask(ctx, &a2ago.CancelTaskRequest{ID: "nope"}); !errors.Is(err, a2ago.ErrTaskNotFound) {
					t.Fatalf("cancel err = %v", err)
				}
				for _, err := range c.SubscribeToTask(ctx, &a2ago.SubscribeToTaskRequest{ID: "nope"}) {
					if !errors.Is(err, a2ago.ErrTaskNotFound) {
						t.Fatalf("subscribe err = %v", err)
					}
				}
			})
			t.Run("STREAM-SUB-003", func(t *testing.T) {
				gotErr := false
				for _, err := range c.SubscribeToTask(ctx, &a2ago.SubscribeToTaskRequest{ID: ids[0]}) {
					if err != nil {
						gotErr = true
					}
				}
				if !gotErr {
					t.Fatal("subscribing to a terminal task was accepted")
				}
			})
			t.Run("CORE-STREAM-001 CORE-STREAM-003 STREAM-ORDER-001", func(t *testing.T) {
				var evs []a2ago.Event
				for ev, err := range c.SendStreamingMessage(ctx, textMsg("research streams")) {
					if err != nil {
						t.Fatal(err)
					}
					evs = append(evs, ev)
				}
				if _, ok := evs[0].(*a2ago.Task); !ok {
					t.Fatalf("first event %T", evs[0])
				}
				progress := 0
				for _, ev := range evs {
					if st, ok := ev.(*a2ago.TaskStatusUpdateEvent); ok && strings.Contains(messageText(st.Status.Message), "research: ") {
						progress++
					}
				}
				if progress != 2 {
					t.Errorf("tool progress status updates = %d, want 2", progress)
				}
				st, ok := evs[len(evs)-1].(*a2ago.TaskStatusUpdateEvent)
				if !ok || st.Status.State != a2ago.TaskStateCompleted {
					t.Fatalf("last event %#v", evs[len(evs)-1])
				}
			})
			t.Run("input-required round trip CORE-MULTI-005", func(t *testing.T) {
				res, err := c.SendMessage(ctx, textMsg("ask weather"))
				if err != nil {
					t.Fatal(err)
				}
				task := res.(*a2ago.Task)
				if task.Status.State != a2ago.TaskStateInputRequired || !strings.Contains(messageText(task.Status.Message), "Which city for weather?") {
					t.Fatalf("task = %+v", task.Status)
				}
				ans := a2ago.NewMessage(a2ago.MessageRoleUser, a2ago.NewTextPart("Paris"))
				ans.TaskID = task.ID // no context id: inferred from the task
				res, err = c.SendMessage(ctx, &a2ago.SendMessageRequest{Message: ans})
				if err != nil {
					t.Fatal(err)
				}
				done := res.(*a2ago.Task)
				if done.Status.State != a2ago.TaskStateCompleted || !strings.Contains(artifactText(done), "city=Paris") || done.ContextID != task.ContextID {
					t.Fatalf("after answer: %+v %q", done.Status, artifactText(done))
				}
			})
			t.Run("CORE-MULTI-006", func(t *testing.T) {
				m := textMsg("hi")
				m.Message.TaskID = ids[0]
				m.Message.ContextID = "another-context"
				if _, err := c.SendMessage(ctx, m); err == nil {
					t.Fatal("mismatching context and task accepted")
				}
			})
			t.Run("CORE-CAP-001 CORE-CAP-003 CARD-EXT-002", func(t *testing.T) {
				if _, err := c.CreateTaskPushConfig(ctx, &a2ago.PushConfig{TaskID: ids[0], URL: "https://example.com/hook"}); !errors.Is(err, a2ago.ErrPushNotificationNotSupported) {
					t.Errorf("push err = %v", err)
				}
				if _, err := c.GetExtendedAgentCard(ctx, &a2ago.GetExtendedAgentCardRequest{}); err == nil {
					t.Errorf("extended card served though not configured")
				}
			})
		})
	}
}

func rawPost(t *testing.T, url string, hdr map[string]string, body string) (*http.Response, map[string]any) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctxT(t), http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	b, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(bytes.TrimPrefix(b, []byte("data: ")), &out)
	return resp, out
}

const rpcSend = `{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello"}]}}}`

// TestVersions covers VER-SERVER-001/002/003, VER-CLIENT-002 and
// JSONRPC-ERR-001/002/003, HTTP_JSON-ERR-001/002.
func TestVersions_VER_SERVER_001_002_003_VER_CLIENT_002(t *testing.T) {
	_, hs := newWorker(t, ServerConfig{})
	tests := []struct {
		name, version string
		wantCode      float64 // JSON-RPC error code, 0 for success
	}{
		{"1.0", "1.0", 0},
		{"patch ignored", "1.0.7", 0},
		{"unsupported", "9.1", -32009},
		{"malformed", "one", -32009},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, out := rawPost(t, hs.URL+jsonrpcPath, map[string]string{"A2A-Version": tc.version}, rpcSend)
			errObj, _ := out["error"].(map[string]any)
			if tc.wantCode == 0 {
				if errObj != nil || out["result"] == nil {
					t.Fatalf("out = %v", out)
				}
				return
			}
			if errObj == nil || errObj["code"] != tc.wantCode || out["id"] != float64(7) {
				t.Fatalf("out = %v", out)
			}
			if data, _ := errObj["data"].([]any); len(data) == 0 {
				t.Errorf("JSONRPC-ERR-003: no ErrorInfo in data")
			}
		})
	}
	t.Run("VER-SERVER-003 empty means 0.3", func(t *testing.T) {
		body := `{"jsonrpc":"2.0","id":"x","method":"message/send","params":{"message":{"kind":"message","messageId":"m2","role":"user","parts":[{"kind":"text","text":"hello"}]}}}`
		_, out := rawPost(t, hs.URL+jsonrpcPath, nil, body)
		res, _ := out["result"].(map[string]any)
		if res == nil || res["kind"] != "task" {
			t.Fatalf("0.3 answer = %v", out)
		}
	})
	t.Run("HTTP_JSON-ERR-001 HTTP_JSON-ERR-002 unsupported over REST", func(t *testing.T) {
		resp, out := rawPost(t, hs.URL+restPath+"/message:send", map[string]string{"A2A-Version": "2.0"},
			`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello"}]}}`)
		e, _ := out["error"].(map[string]any)
		if resp.StatusCode != 400 || e == nil || e["status"] != "FAILED_PRECONDITION" {
			t.Fatalf("%d %v", resp.StatusCode, out)
		}
		d, _ := e["details"].([]any)
		if len(d) == 0 || d[0].(map[string]any)["reason"] != "VERSION_NOT_SUPPORTED" {
			t.Fatalf("details = %v", e["details"])
		}
	})
}

// TestVersionHeaderSent covers VER-CLIENT-001: our client sends
// A2A-Version on every request.
func TestVersionHeaderSent_VER_CLIENT_001(t *testing.T) {
	srv, _ := newWorker(t, ServerConfig{})
	var mu sync.Mutex
	var seen []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.URL.Path, ".well-known") {
			mu.Lock()
			seen = append(seen, r.Header.Get("A2A-Version"))
			mu.Unlock()
		}
		srv.ServeHTTP(w, r)
	}))
	defer hs.Close()
	ctx := ctxT(t)
	for _, rest := range []bool{false, true} {
		ts, err := NewToolset(ctx, ToolsetConfig{Peers: []Peer{{Name: "w", URL: hs.URL, PreferREST: rest}}})
		if err != nil {
			t.Fatal(err)
		}
		tools, _ := ts.Tools(ctx)
		if _, err := tools[0].Call(ctx, json.RawMessage(`{"message":"hi"}`)); err != nil {
			t.Fatal(err)
		}
		ts.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) < 2 {
		t.Fatalf("requests seen: %v", seen)
	}
	for _, v := range seen {
		if v != "1.0" {
			t.Fatalf("A2A-Version headers: %v", seen)
		}
	}
}

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in           string
		major, minor int
		ok           bool
	}{
		{"", 0, 3, true}, {"1.0", 1, 0, true}, {"1.0.3", 1, 0, true}, {"v1.2", 1, 2, true},
		{"0.3", 0, 3, true}, {"1", 1, 0, true}, {"x", 0, 0, false}, {"1.0.0.0", 0, 0, false}, {"-1.0", 0, 0, false},
	}
	for _, tc := range tests {
		ma, mi, err := parseVersion(tc.in)
		if (err == nil) != tc.ok || (tc.ok && (ma != tc.major || mi != tc.minor)) {
			t.Errorf("ParseVersion(%q) = %d %d %v", tc.in, ma, mi, err)
		}
	}
}

func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{"", "1.0", "0.3", "1.0.1", "v2", "1..0", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ma, mi, err := parseVersion(s)
		if err == nil && (ma < 0 || mi < 0) {
			t.Fatalf("negative version from %q", s)
		}
	})
}

var _ = context.Background
var _ = time.Second
