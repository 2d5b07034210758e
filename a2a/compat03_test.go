package a2a

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
)

// Regression tests of the rewrites in front of a2a-go's 0.3 bindings
// (compat03.go), over a real server and raw JSON as 0.3 clients send it.

// do03 sends a raw request (A2A-Version version, none when empty) and
// returns the status, the body and its Content-Type.
func do03(t *testing.T, method, url, version, body string) (int, []byte, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctxT(t), method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if version != "" {
		req.Header.Set("A2A-Version", version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b, resp.Header.Get("Content-Type")
}

// task03 creates a task over 0.3 JSON-RPC ("slow ..." keeps it working
// until cancelled; anything else completes) and returns its id.
func task03(t *testing.T, base, text string, blocking bool) string {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":"t","method":"message/send","params":{"message":{"kind":"message","messageId":"` +
		strings.ReplaceAll(t.Name(), "/", "-") + text[:4] + `","role":"user","parts":[{"kind":"text","text":"` + text +
		`"}]},"configuration":{"blocking":` + map[bool]string{true: "true", false: "false"}[blocking] + `}}}`
	_, b, _ := do03(t, http.MethodPost, base+jsonrpcPath, "", body)
	var out struct {
		Result struct {
			ID   string `json:"id"`
			Kind string `json:"kind"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.Result.Kind != "task" || out.Result.ID == "" {
		t.Fatalf("message/send answered %s (%v)", b, err)
	}
	return out.Result.ID
}

func TestV03RESTPushCreateAcceptsBareConfig(t *testing.T) {
	_, hs := newWorker(t, ServerConfig{PushNotifications: true, AllowPrivatePush: true})
	hook := newHookServer(t, func(string, string) {})
	id := task03(t, hs.URL, "slow push", false)
	base := hs.URL + restPath + "/v1/tasks/" + id + "/pushNotificationConfigs"
	tests := []struct {
		name, body string
		wantID     string // "" means an error is expected
		wantCode   float64
	}{
		{"bare TaskPushNotificationConfig (0.3 HTTP rule, JS SDK 0.3 client)",
			`{"name":"tasks/` + id + `/pushNotificationConfigs/c1","pushNotificationConfig":{"id":"c1","url":"` + hook + `","token":"tok"}}`,
			"c1", 0},
		{"bare config without a name",
			`{"pushNotificationConfig":{"id":"c2","url":"` + hook + `"}}`, "c2", 0},
		{"request message (a2a-go's 0.3 client, JS SDK 0.3 server)",
			`{"parent":"tasks/` + id + `","configId":"c3","config":{"pushNotificationConfig":{"url":"` + hook + `"}}}`,
			"c3", 0},
		{"not JSON", `{"pushNotificationConfig":`, "", -32700},
		{"neither shape", `{"url":"` + hook + `"}`, "", -32700},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, b, _ := do03(t, http.MethodPost, base, "", tc.body)
			var out struct {
				Code   float64 `json:"code"`
				Config struct {
					ID  string `json:"id"`
					URL string `json:"url"`
				} `json:"pushNotificationConfig"`
			}
			if err := json.Unmarshal(b, &out); err != nil {
				t.Fatalf("%d %s: %v", status, b, err)
			}
			if tc.wantID == "" {
				if status != http.StatusBadRequest || out.Code != tc.wantCode {
					t.Fatalf("want 400 with code %v, got %d %s", tc.wantCode, status, b)
				}
				return
			}
			if status != http.StatusOK || out.Config.ID != tc.wantID || out.Config.URL != hook {
				t.Fatalf("create answered %d %s", status, b)
			}
		})
	}
	status, b, _ := do03(t, http.MethodGet, base, "", "")
	var list struct {
		Configs []json.RawMessage `json:"configs"`
	}
	if err := json.Unmarshal(b, &list); err != nil || status != http.StatusOK || len(list.Configs) != 3 {
		t.Fatalf("list answered %d %s (%v)", status, b, err)
	}
}

func TestV03RESTErrorsInV03Form(t *testing.T) {
	_, hs := newWorker(t, ServerConfig{PushNotifications: true, AllowPrivatePush: true})
	_, plain := newWorker(t, ServerConfig{}) // no push notifications
	done := task03(t, hs.URL, "hello", true)
	filePart03 := `{"message":{"messageId":"mf","role":"ROLE_USER","content":[{"file":{"fileWithUri":"https://example.com/a.png","mimeType":"image/png"}}]}}`
	filePart10 := `{"message":{"messageId":"mf","role":"ROLE_USER","parts":[{"url":"https://example.com/a.png","mediaType":"image/png"}]}}`
	tests := []struct {
		name           string
		base           string
		method         string
		path10, path03 string // the same request on the 1.0 and the 0.3 binding
		body10, body03 string
		wantStatus     int
		wantCode       float64
	}{
		{"task not found", hs.URL, http.MethodGet, "/tasks/no-such-task", "/v1/tasks/no-such-task", "", "", 404, -32001},
		{"cancel of an unknown task", hs.URL, http.MethodPost, "/tasks/no-such-task:cancel", "/v1/tasks/no-such-task:cancel", "", "", 404, -32001},
		{"not cancelable", hs.URL, http.MethodPost, "/tasks/" + done + ":cancel", "/v1/tasks/" + done + ":cancel", "", "", 400, -32002},
		{"push not supported", plain.URL, http.MethodGet, "/tasks/" + done + "/pushNotificationConfigs", "/v1/tasks/" + done + "/pushNotificationConfigs", "", "", 400, -32003},
		{"content type not supported", hs.URL, http.MethodPost, "/message:send", "/v1/message:send", filePart10, filePart03, 400, -32005},
		{"invalid request", hs.URL, http.MethodGet, "/tasks/" + done + "?historyLength=many", "/v1/tasks/" + done + "?historyLength=many", "", "", 400, -32600},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status10, b10, _ := do03(t, tc.method, tc.base+restPath+tc.path10, "1.0", tc.body10)
			var aip struct {
				Error struct {
					Code float64 `json:"code"`
				} `json:"error"`
			}
			if json.Unmarshal(b10, &aip) != nil || aip.Error.Code == 0 || status10 != tc.wantStatus {
				t.Fatalf("1.0 binding: %d %s", status10, b10)
			}
			status, b, ctype := do03(t, tc.method, tc.base+restPath+tc.path03, "", tc.body03)
			var v03 struct {
				Code    *float64        `json:"code"`
				Message string          `json:"message"`
				Error   json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal(b, &v03); err != nil {
				t.Fatalf("0.3 binding: %d %s: %v", status, b, err)
			}
			if status != status10 {
				t.Errorf("HTTP status %d on 0.3, %d on 1.0", status, status10)
			}
			if v03.Code == nil || *v03.Code != tc.wantCode || v03.Message == "" {
				t.Errorf("0.3 body %s: want code %v and a message", b, tc.wantCode)
			}
			if !strings.HasPrefix(ctype, "application/json") {
				t.Errorf("Content-Type %q", ctype)
			}
			if len(v03.Error) == 0 { // a2a-go's 0.3 REST client reads this member
				t.Errorf("0.3 body %s has lost the AIP-193 error", b)
			}
		})
	}
	t.Run("a2a-go's 0.3 REST client gets a typed error", func(t *testing.T) {
		tr, err := a2av0.NewRESTTransport(a2av0.RESTTransportConfig{URL: hs.URL + restPath})
		if err != nil {
			t.Fatal(err)
		}
		_, err = tr.GetTask(ctxT(t), a2aclient.ServiceParams{}, &a2ago.GetTaskRequest{ID: "no-such-task"})
		if !errors.Is(err, a2ago.ErrTaskNotFound) {
			t.Fatalf("err = %v, want task not found", err)
		}
	})
	t.Run("an error in a stream is a 0.3 error event", func(t *testing.T) {
		status, b, ctype := do03(t, http.MethodPost, hs.URL+restPath+"/v1/tasks/no-such-task:subscribe", "", "")
		_, data, found := bytes.Cut(b, []byte("event: error\ndata: "))
		var v03 struct {
			Code  float64         `json:"code"`
			Error json.RawMessage `json:"error"`
		}
		if status != http.StatusOK || ctype != "text/event-stream" || !found ||
			json.Unmarshal(bytes.TrimSpace(data), &v03) != nil || v03.Code != -32001 || len(v03.Error) == 0 {
			t.Fatalf("subscribe answered %d %q %s", status, ctype, b)
		}
		tr, err := a2av0.NewRESTTransport(a2av0.RESTTransportConfig{URL: hs.URL + restPath})
		if err != nil {
			t.Fatal(err)
		}
		for _, err := range tr.SubscribeToTask(ctxT(t), a2aclient.ServiceParams{}, &a2ago.SubscribeToTaskRequest{ID: "no-such-task"}) {
			if !errors.Is(err, a2ago.ErrTaskNotFound) {
				t.Fatalf("a2a-go's 0.3 client: %v, want task not found", err)
			}
			break
		}
	})
	t.Run("successes and streams pass through", func(t *testing.T) {
		status, b, _ := do03(t, http.MethodGet, hs.URL+restPath+"/v1/tasks/"+done, "", "")
		if status != http.StatusOK || !bytes.Contains(b, []byte(done)) {
			t.Fatalf("get answered %d %s", status, b)
		}
		status, b, ctype := do03(t, http.MethodPost, hs.URL+restPath+"/v1/message:stream", "",
			`{"message":{"messageId":"ms","role":"ROLE_USER","content":[{"text":"hello"}]}}`)
		if status != http.StatusOK || ctype != "text/event-stream" || !bytes.Contains(b, []byte("echo: hello")) {
			t.Fatalf("stream answered %d %q %s", status, ctype, b)
		}
	})
}

func TestV03JSONRPCListPushConfigsEmptyIsArray(t *testing.T) {
	_, hs := newWorker(t, ServerConfig{PushNotifications: true, AllowPrivatePush: true})
	hook := newHookServer(t, func(string, string) {})
	id := task03(t, hs.URL, "slow list", false)
	call := func(method, params string) json.RawMessage {
		t.Helper()
		status, b, _ := do03(t, http.MethodPost, hs.URL+jsonrpcPath, "",
			`{"jsonrpc":"2.0","id":"l","method":"`+method+`","params":`+params+`}`)
		var out struct {
			ID     string          `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(b, &out); err != nil || status != http.StatusOK || out.ID != "l" || len(out.Error) > 0 {
			t.Fatalf("%s answered %d %s (%v)", method, status, b, err)
		}
		return out.Result
	}
	list := func() []json.RawMessage {
		t.Helper()
		raw := call("tasks/pushNotificationConfig/list", `{"id":"`+id+`"}`)
		var l []json.RawMessage
		if string(raw) == "null" || json.Unmarshal(raw, &l) != nil || l == nil {
			t.Fatalf("list result %s, want an array", raw)
		}
		return l
	}
	if l := list(); len(l) != 0 {
		t.Fatalf("before any config: %d configs", len(l))
	}
	call("tasks/pushNotificationConfig/set", `{"taskId":"`+id+`","pushNotificationConfig":{"id":"c1","url":"`+hook+`"}}`)
	if l := list(); len(l) != 1 {
		t.Fatalf("after set: %d configs", len(l))
	}
	call("tasks/pushNotificationConfig/delete", `{"id":"`+id+`","pushNotificationConfigId":"c1"}`)
	if l := list(); len(l) != 0 {
		t.Fatalf("after delete: %d configs", len(l))
	}
}

func TestCaptureWriterBounds(t *testing.T) {
	aip := `{"error":{"code":404,"status":"NOT_FOUND","message":"gone","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}`
	big := `{"error":{"code":404,"status":"NOT_FOUND","message":"` + strings.Repeat("x", maxV03ErrorBody) + `"}}`
	tests := []struct {
		name     string
		status   int
		body     string
		wantBody func(string) bool
	}{
		{"error rewritten", 404, aip, func(b string) bool { return strings.HasPrefix(b, `{"code":-32001,"message":"gone","error":`) }},
		{"error over the bound passes through", 404, big, func(b string) bool { return b == big }},
		{"success passes through", 200, `{"id":"t"}`, func(b string) bool { return b == `{"id":"t"}` }},
		{"error that is not AIP-193 passes through", 404, "404 page not found\n", func(b string) bool { return b == "404 page not found\n" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := v03REST(1<<20, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				// Written in pieces, as an encoder may.
				for b := []byte(tc.body); len(b) > 0; {
					n := min(len(b), 1000)
					_, _ = w.Write(b[:n])
					b = b[n:]
				}
			}))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/tasks/t", nil))
			got := strings.TrimSuffix(rec.Body.String(), "\n")
			if tc.body == "404 page not found\n" {
				got = rec.Body.String()
			}
			if rec.Code != tc.status || !tc.wantBody(got) {
				t.Fatalf("%d %.200s", rec.Code, got)
			}
		})
	}
	t.Run("a stream is flushed as it is written", func(t *testing.T) {
		rec := httptest.NewRecorder()
		h := v03REST(1<<20, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte("data: {}\n\n"))
			w.(http.Flusher).Flush()
			if !rec.Flushed || rec.Body.String() != "data: {}\n\n" {
				t.Errorf("not flushed through: %v %q", rec.Flushed, rec.Body.String())
			}
		}))
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/message:stream", strings.NewReader("{}")))
	})
}

// FuzzV03Rewrites: the 0.3 rewrites never panic, and what they write is
// JSON of the promised shape.
func FuzzV03Rewrites(f *testing.F) {
	for _, s := range []string{
		`{"name":"tasks/t/pushNotificationConfigs/c","pushNotificationConfig":{"id":"c","url":"https://x/h"}}`,
		`{"parent":"tasks/t","config":{"pushNotificationConfig":{"url":"https://x/h"}}}`,
		`{"error":{"code":404,"status":"NOT_FOUND","message":"m","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}`,
		`{"error":{"status":"WHATEVER","details":[1,"x",{"@type":7}]}}`,
		`{"jsonrpc":"2.0","id":"l","result":null}`, `{"jsonrpc":"2.0","id":1,"result":[]}`,
		`null`, `[]`, `{"error":null}`, `{`, ``,
		"data: {\"error\":{\"code\":404,\"status\":\"NOT_FOUND\",\"message\":\"m\"}}\n\n", "data: {\"task\":{}}\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = isPushCreatePath(string(b))
		if out, ok := pushCreateBody(b); ok {
			var m map[string]json.RawMessage
			var in, cfg bytes.Buffer
			if json.Unmarshal(out, &m) != nil || len(m) != 1 || json.Compact(&in, b) != nil ||
				json.Compact(&cfg, m["config"]) != nil || in.String() != cfg.String() {
				t.Fatalf("pushCreateBody(%q) = %q", b, out)
			}
		}
		if out, ok := v03ErrorBody(400, b); ok {
			var v struct {
				Code    *int            `json:"code"`
				Message string          `json:"message"`
				Error   json.RawMessage `json:"error"`
			}
			if json.Unmarshal(out, &v) != nil || v.Code == nil || v.Message == "" || len(v.Error) == 0 {
				t.Fatalf("v03ErrorBody(%q) = %q", b, out)
			}
		}
		if out, ok := sseErrorEvent(b); ok {
			body, found := bytes.CutPrefix(out, []byte("event: error\ndata: "))
			body, ended := bytes.CutSuffix(body, []byte("\n\n"))
			if !found || !ended || bytes.IndexByte(body, '\n') >= 0 || !json.Valid(body) {
				t.Fatalf("sseErrorEvent(%q) = %q", b, out)
			}
		}
		if out, ok := emptyListResult(b); ok {
			var v struct {
				Result []json.RawMessage `json:"result"`
			}
			if json.Unmarshal(out, &v) != nil || v.Result == nil || len(v.Result) != 0 {
				t.Fatalf("emptyListResult(%q) = %q", b, out)
			}
		}
	})
}
