package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
)

// A delegation sends its call's idempotency key as the message id, so a
// resend of the same call (a retry, a resumed durable run) carries the
// same messageId; a call without a key gets a fresh id each time.
func TestMessageIDFromIdempotencyKey(t *testing.T) {
	srv, _ := newWorker(t, ServerConfig{})
	var mu sync.Mutex
	var ids []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var rpc struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &rpc)
		if m := messageID.FindSubmatch(body); m != nil && (sendMethods[rpc.Method] || strings.Contains(r.URL.Path, "message:")) {
			mu.Lock()
			ids = append(ids, string(m[1]))
			mu.Unlock()
		}
		srv.ServeHTTP(w, r)
	}))
	defer hs.Close()
	ctx := ctxT(t)
	ts, err := NewToolset(ctx, ToolsetConfig{Peers: []Peer{{Name: "w", URL: hs.URL}}, Policy: fastPolicy()})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	tools, _ := ts.Tools(ctx)
	keyed, done := agent.BindCall(ctx, agent.CallBinding{Run: "run_abc", ID: "call_1", Tool: tools[0].Spec().Name, IdempotencyKey: "run_abc/call_1"})
	defer done()
	for _, c := range []struct {
		ctx  context.Context
		text string
	}{{keyed, "first"}, {keyed, "again"}, {ctx, "plain"}, {ctx, "plain"}} {
		if res, err := tools[0].Call(c.ctx, json.RawMessage(`{"message":"`+c.text+`"}`)); err != nil || res.IsError {
			t.Fatalf("%s: %v %v", c.text, res, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ids) != 4 || ids[0] != "run_abc/call_1" || ids[1] != ids[0] || ids[2] == ids[3] || ids[2] == ids[0] {
		t.Fatalf("message ids sent: %q", ids)
	}
}
