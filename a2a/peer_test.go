package a2a

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/switchboard-dev/switchboard/failure"
)

// TestPeerTransportRepairsAnswers: what the peer transport hands a2a-go
// for each kind of answer a peer gives.
func TestPeerTransportRepairsAnswers(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		ctype      string
		body       string
		wantStatus int
		wantBody   string // exact, or "" to skip
		wantReason string // the ErrorInfo reason of a rewritten error body
	}{
		{"201 created", 201, "application/json", `{"id":"c1"}`, 200, `{"id":"c1"}`, ""},
		{"202 accepted", 202, "application/json", `{"task":{}}`, 200, `{"task":{}}`, ""},
		{"204 no content", 204, "", ``, 200, `{}`, ""},
		{"200 untouched", 200, "application/json", `{"a":1}`, 200, `{"a":1}`, ""},
		{"0.3 task not found", 404, "application/json; charset=utf-8", `{"code":-32001,"message":"Task not found: x"}`, 404, "", "TASK_NOT_FOUND"},
		{"0.3 not cancelable", 400, "application/json", `{"code":-32002,"message":"no"}`, 400, "", "TASK_NOT_CANCELABLE"},
		{"0.3 invalid params", 400, "application/json", `{"code":-32602,"message":"bad role"}`, 400, "", "INVALID_PARAMS"},
		{"0.3 unknown code", 500, "application/json", `{"code":-1,"message":"odd"}`, 500, "", "INTERNAL_ERROR"},
		{"a2a+json relabelled, kept", 404, "application/a2a+json", `{"error":{"code":404,"status":"NOT_FOUND"}}`, 404, `{"error":{"code":404,"status":"NOT_FOUND"}}`, ""},
		{"not JSON untouched", 502, "text/html", `<html>bad gateway</html>`, 502, `<html>bad gateway</html>`, ""},
		{"JSON garbage kept", 500, "application/json", `{"code":"x"`, 500, `{"code":"x"`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.ctype != "" {
					w.Header().Set("Content-Type", tc.ctype)
				}
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			}))
			defer hs.Close()
			hc := httpClientFor(nil, Peer{Name: "p"})
			resp, err := hc.Get(hs.URL)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.wantStatus)
			}
			if tc.wantBody != "" && string(b) != tc.wantBody {
				t.Fatalf("body %q, want %q", b, tc.wantBody)
			}
			if resp.StatusCode >= 400 && strings.HasPrefix(tc.ctype, "application/") && resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("content type %q", resp.Header.Get("Content-Type"))
			}
			if tc.wantReason != "" {
				var e struct {
					Error struct {
						Code    int    `json:"code"`
						Message string `json:"message"`
						Details []struct {
							Reason, Domain string
						} `json:"details"`
					} `json:"error"`
				}
				if err := json.Unmarshal(b, &e); err != nil || len(e.Error.Details) != 1 {
					t.Fatalf("body %s: %v", b, err)
				}
				if d := e.Error.Details[0]; d.Reason != tc.wantReason || d.Domain != a2ago.ProtocolDomain || e.Error.Code != tc.status {
					t.Fatalf("body %s", b)
				}
			}
		})
	}
}

// TestUnionPushConfigBody: a 0.3 create-push-config request carries the
// config both wrapped (as a2a-go and the JS SDK 0.3 server want) and at the
// top level (as the 0.3 HTTP rule and the JS SDK 1.x's 0.3 layer want);
// other requests are not touched.
func TestUnionPushConfigBody(t *testing.T) {
	wrapped := `{"parent":"tasks/t1","configId":"c1","config":{"name":"tasks/t1/pushNotificationConfigs/c1","pushNotificationConfig":{"id":"c1","url":"http://h"}}}`
	tests := []struct {
		name, body string
		changed    bool
	}{
		{"0.3 wrapped request", wrapped, true},
		{"1.0 config", `{"taskId":"t1","id":"c1","url":"http://h"}`, false},
		{"not JSON", `not json`, false},
		{"config without pushNotificationConfig", `{"parent":"tasks/t1","config":{"name":"x"}}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := http.NewRequest(http.MethodPost, "http://x/v1/tasks/t1/pushNotificationConfigs", strings.NewReader(tc.body))
			out := unionPushConfigBody(r)
			b, _ := io.ReadAll(out.Body)
			if !tc.changed {
				if string(b) != tc.body || out != r {
					t.Fatalf("changed to %s", b)
				}
				return
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"parent", "configId", "config", "name", "pushNotificationConfig"} {
				if m[k] == nil {
					t.Errorf("no %s in %s", k, b)
				}
			}
			if out.ContentLength != int64(len(b)) {
				t.Errorf("content length %d for %d bytes", out.ContentLength, len(b))
			}
			again, _ := out.GetBody()
			if b2, _ := io.ReadAll(again); string(b2) != string(b) {
				t.Error("GetBody differs")
			}
		})
	}
}

// FuzzLegacyErrorBody: any body either stays as it is or becomes an
// AIP-193 error a2a-go decodes.
func FuzzLegacyErrorBody(f *testing.F) {
	for _, s := range []string{`{"code":-32001,"message":"Task not found"}`, `{"code":-32602}`, `{"error":{"code":404}}`,
		`{"code":1.5}`, `[]`, `null`, `{"code":-32001,"message":"\u0000"}`, ``} {
		f.Add([]byte(s), 404)
	}
	f.Fuzz(func(t *testing.T, body []byte, status int) {
		out, ok := legacyErrorBody(body, status)
		if !ok {
			return
		}
		var e struct {
			Error struct {
				Details []struct{ Reason string } `json:"details"`
			} `json:"error"`
		}
		if err := json.Unmarshal(out, &e); err != nil || len(e.Error.Details) != 1 || e.Error.Details[0].Reason == "" {
			t.Fatalf("%s -> %s: %v", body, out, err)
		}
	})
}

// TestLegacyRESTAnswersThroughClient: a2a-go's 0.3 REST client, through the
// peer transport, against a peer answering as the JS SDK 0.3 does: 201 for
// message:send and 404 {"code": -32001} for an unknown task. The send
// succeeds and the unknown task is NotFound, not a retried internal error.
func TestLegacyRESTAnswersThroughClient(t *testing.T) {
	var base string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		switch {
		case r.URL.Path == cardPath:
			_, _ = io.WriteString(w, `{"name":"old","description":"d","version":"1","protocolVersion":"0.3.0","url":"`+base+`/rest",`+
				`"preferredTransport":"HTTP+JSON","capabilities":{"streaming":false},"defaultInputModes":["text/plain"],`+
				`"defaultOutputModes":["text/plain"],"skills":[]}`)
		case strings.HasSuffix(r.URL.Path, "/v1/message:send"):
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}}`)
		case strings.HasPrefix(r.URL.Path, "/rest/v1/tasks/"):
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"code":-32001,"message":"Task not found: nope"}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer hs.Close()
	base = hs.URL
	ctx := ctxT(t)
	ts, err := NewToolset(ctx, ToolsetConfig{Peers: []Peer{{Name: "old", URL: base, PreferREST: true}}, Policy: fastPolicy()})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	c, _ := ts.Client("old")
	res, err := c.SendMessage(ctx, textMsg("hi"))
	if task, ok := res.(*a2ago.Task); err != nil || !ok || task.ID != "t1" {
		t.Fatalf("send = %#v, %v", res, err)
	}
	_, err = c.GetTask(ctx, &a2ago.GetTaskRequest{ID: "nope"})
	if !errors.Is(err, a2ago.ErrTaskNotFound) {
		t.Fatalf("err = %v", err)
	}
	if fe := classify(err, "old", "", "get task"); fe.Kind != failure.NotFound || fe.Retryable {
		t.Fatalf("classified %v (retryable %v)", fe.Kind, fe.Retryable)
	}
}
