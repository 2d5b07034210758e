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
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
)

// cutWriter aborts the connection after the first SSE event is written.
type cutWriter struct {
	http.ResponseWriter
	n int
}

func (c *cutWriter) Write(b []byte) (int, error) {
	n, err := c.ResponseWriter.Write(b)
	if bytes.Contains(b, []byte("data:")) {
		c.n++
		if c.n >= 1 {
			if f, ok := c.ResponseWriter.(http.Flusher); ok {
				f.Flush()
			}
			panic(http.ErrAbortHandler) // the peer's connection dies mid-stream
		}
	}
	return n, err
}

func (c *cutWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// methodOf peeks at a JSON-RPC request's method and restores the body.
func methodOf(r *http.Request) string {
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	var m struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(b, &m)
	return m.Method
}

// TestStreamDroppedMidway: the first stream dies after one event; the
// client resumes (SubscribeToTask, or GetTask when the task already ended)
// and returns the complete result.
func TestStreamDroppedMidway(t *testing.T) {
	srv, _ := newWorker(t, ServerConfig{})
	var cut atomic.Bool
	var mu sync.Mutex
	var after []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			m := methodOf(r)
			if m == "SendStreamingMessage" && cut.CompareAndSwap(false, true) {
				srv.ServeHTTP(&cutWriter{ResponseWriter: w}, r)
				return
			}
			if cut.Load() {
				mu.Lock()
				after = append(after, m)
				mu.Unlock()
			}
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
	res, err := tools[0].Call(ctx, json.RawMessage(`{"message":"research resilience"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text(), "done: notes on resilience") {
		t.Fatalf("result = %q", res.Text())
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("after the cut: %v", after)
	if !cut.Load() || len(after) == 0 || (after[0] != "SubscribeToTask" && after[0] != "GetTask") {
		t.Fatalf("no resume after the cut: %v", after)
	}
	for _, m := range after {
		if m == "SendStreamingMessage" || m == "SendMessage" {
			t.Fatalf("the message was sent twice: %v", after)
		}
	}
}

// TestPeerDiesMidStream: the peer goes away for good during a task; the
// call ends with a typed, retryable-kind failure instead of hanging.
func TestPeerDiesMidStream(t *testing.T) {
	srv, _ := newWorker(t, ServerConfig{})
	started := make(chan struct{})
	var once sync.Once
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		srv.ServeHTTP(&onWrite{ResponseWriter: w, fn: func(b []byte) {
			if bytes.Contains(b, []byte("slow: started")) {
				once.Do(func() { close(started) })
			}
		}}, r)
	}))
	ctx := ctxT(t)
	ts, err := NewToolset(ctx, ToolsetConfig{Peers: []Peer{{Name: "w", URL: hs.URL}}, Policy: fastPolicy(), PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	tools, _ := ts.Tools(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := tools[0].Call(ctx, json.RawMessage(`{"message":"slow forever"}`))
		errc <- err
	}()
	<-started
	// The peer's process dies: it stops accepting, and its connections drop.
	hs.Listener.Close()
	hs.CloseClientConnections()
	err = <-errc
	hs.Close()
	var fe *failure.Error
	if !errors.As(err, &fe) || fe.Source != failure.SourceA2A || fe.Name != "w" {
		t.Fatalf("err = %v", err)
	}
	// The remote task exists: the failure must not invite a retry that
	// would start a second task.
	if fe.Kind != failure.Unavailable || fe.Retryable || fe.Kind.Retryable() {
		t.Fatalf("kind = %v, retryable %v (%v)", fe.Kind, fe.Retryable, err)
	}
}

type onWrite struct {
	http.ResponseWriter
	fn func([]byte)
}

func (o *onWrite) Write(b []byte) (int, error) { o.fn(b); return o.ResponseWriter.Write(b) }
func (o *onWrite) Flush() {
	if f, ok := o.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// TestMalformedCards: a card that is not usable is a typed failure at
// wiring time, never a panic.
func TestMalformedCards(t *testing.T) {
	_, worker := newWorker(t, ServerConfig{})
	good, _ := http.Get(worker.URL + cardPath)
	goodCard, _ := io.ReadAll(good.Body)
	good.Body.Close()
	tests := []struct {
		name   string
		serve  func(w http.ResponseWriter, r *http.Request)
		kind   failure.Kind
		wantOK bool
	}{
		{"not json", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<html>hello</html>") }, failure.Protocol, false},
		{"no name", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"description":"x","supportedInterfaces":[{"url":"http://x","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`)
		}, failure.Protocol, false},
		{"no interfaces", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"name":"x","supportedInterfaces":[]}`)
		}, failure.Protocol, false},
		{"bad url", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"name":"x","supportedInterfaces":[{"url":"file:///etc/passwd","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`)
		}, failure.Protocol, false},
		{"unknown binding only", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"name":"x","supportedInterfaces":[{"url":"http://x","protocolBinding":"CARRIER-PIGEON","protocolVersion":"1.0"}]}`)
		}, failure.Protocol, false},
		{"no card at all", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }, failure.Protocol, false},
		{"server error", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "boom", http.StatusServiceUnavailable) }, failure.Transient, false},
		{"legacy path only", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == legacyCardPath {
				w.Write(goodCard)
				return
			}
			http.NotFound(w, r)
		}, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hs := httptest.NewServer(http.HandlerFunc(tc.serve))
			defer hs.Close()
			ts, err := NewToolset(ctxT(t), ToolsetConfig{Peers: []Peer{{Name: "p", URL: hs.URL}}, Policy: fastPolicy()})
			if tc.wantOK {
				if err != nil {
					t.Fatal(err)
				}
				ts.Close()
				return
			}
			if !errors.Is(err, tc.kind) {
				t.Fatalf("err = %v, want kind %v", err, tc.kind)
			}
			var fe *failure.Error
			if errors.As(err, &fe); fe.Name != "p" || fe.Source != failure.SourceA2A {
				t.Fatalf("failure not attributed to the peer: %+v", fe)
			}
		})
	}
}

// TestGarbageAnswers: a peer with a good card that answers garbage yields a
// typed Protocol failure on every binding and mode.
func TestGarbageAnswers(t *testing.T) {
	var base string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == cardPath:
			io.WriteString(w, `{"name":"garbage","description":"g","version":"1","capabilities":{"streaming":true},`+
				`"supportedInterfaces":[{"url":"`+base+`/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"},`+
				`{"url":"`+base+`/rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}]}`)
		case strings.Contains(r.Header.Get("Accept"), "text/event-stream") || strings.Contains(r.URL.Path, "stream"):
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {this is not json\n\n")
		case strings.HasPrefix(r.URL.Path, "/rpc") && methodOf(r) == "SendStreamingMessage":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: [1,2,3]\n\n")
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":"?","result":{"surprise":true}}`)
		}
	}))
	defer hs.Close()
	base = hs.URL
	for _, tc := range []struct {
		name string
		peer Peer
	}{
		{"jsonrpc stream", Peer{Name: "g", URL: base}},
		{"jsonrpc blocking", Peer{Name: "g", URL: base, NoStreaming: true}},
		{"rest stream", Peer{Name: "g", URL: base, PreferREST: true}},
		{"rest blocking", Peer{Name: "g", URL: base, PreferREST: true, NoStreaming: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := ctxT(t)
			ts, err := NewToolset(ctx, ToolsetConfig{Peers: []Peer{tc.peer}, Policy: fastPolicy(), PollInterval: 5 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer ts.Close()
			tools, _ := ts.Tools(ctx)
			_, err = tools[0].Call(ctx, json.RawMessage(`{"message":"hi"}`))
			var fe *failure.Error
			if !errors.As(err, &fe) || (fe.Kind != failure.Protocol && fe.Kind != failure.Unavailable) || fe.Name != "g" {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

var _ = context.Background

// TestStreamingErrorAsPlainJSON: a peer that answers a streaming call with
// a plain JSON-RPC error (as the JS SDK does for errors before the stream
// starts) yields that typed error; a2a-go alone would see an empty stream.
func TestStreamingErrorAsPlainJSON(t *testing.T) {
	var base string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == cardPath {
			io.WriteString(w, `{"name":"p","description":"d","version":"1","capabilities":{"streaming":true},`+
				`"supportedInterfaces":[{"url":"`+base+`/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "{\n  \"jsonrpc\": \"2.0\", \"id\": \"x\",\n  \"error\": {\"code\": -32004, \"message\": \"unsupported here\"}\n}")
	}))
	defer hs.Close()
	base = hs.URL
	ctx := ctxT(t)
	ts, err := NewToolset(ctx, ToolsetConfig{Peers: []Peer{{Name: "p", URL: base}}, Policy: fastPolicy()})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	tools, _ := ts.Tools(ctx)
	_, err = tools[0].Call(ctx, json.RawMessage(`{"message":"hi"}`))
	if !errors.Is(err, failure.Rejected) || !strings.Contains(err.Error(), "unsupported") {
		t.Fatalf("err = %v", err)
	}
}

// fastPolicy retries quickly.
func fastPolicy() failure.Policy {
	return testkit.FastPolicy(failure.PolicyConfig{InitialBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond})
}
