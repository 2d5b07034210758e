package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
)

// sendPaths are the request paths (REST) and methods (JSON-RPC) that send
// a message.
var (
	sendMethods = map[string]bool{"SendMessage": true, "SendStreamingMessage": true}
	messageID   = regexp.MustCompile(`"messageId"\s*:\s*"([^"]+)"`)
)

// firstDeliveryFails wraps a real server: the first delivery of each
// message (by messageId) is handled by the server — the task is created
// and runs — and then answered with an error instead of the server's
// answer; later deliveries pass. With process false the first delivery is
// refused with 503 before the server sees it.
type firstDeliveryFails struct {
	srv     http.Handler
	process bool
	style   string // "jsonrpc-internal", "http-500", "reset"

	mu    sync.Mutex
	seen  map[string]bool
	sends int
}

func (f *firstDeliveryFails) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var rpc struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.Unmarshal(body, &rpc)
	isSend := sendMethods[rpc.Method] || strings.HasSuffix(r.URL.Path, "message:send") || strings.HasSuffix(r.URL.Path, "message:stream")
	m := messageID.FindSubmatch(body)
	if !isSend || m == nil {
		f.srv.ServeHTTP(w, r)
		return
	}
	f.mu.Lock()
	f.sends++
	first := !f.seen[string(m[1])]
	f.seen[string(m[1])] = true
	f.mu.Unlock()
	if !first {
		f.srv.ServeHTTP(w, r)
		return
	}
	if !f.process {
		http.Error(w, "overloaded, try later", http.StatusServiceUnavailable)
		return
	}
	rec := httptest.NewRecorder()
	f.srv.ServeHTTP(rec, r) // the task is created and runs to its end
	switch {
	case f.style == "reset":
		panic(http.ErrAbortHandler)
	case f.style == "http-500":
		http.Error(w, "upstream failed", http.StatusInternalServerError)
	case rpc.Method != "":
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(rpc.ID)+`,"error":{"code":-32603,"message":"internal error"}}`)
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"error":{"code":500,"status":"INTERNAL","message":"internal error","details":[`+
			`{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INTERNAL_ERROR","domain":"a2a-protocol.org"}]}}`)
	}
}

// TestSendNeverCreatesASecondTask: a peer that creates the task and then
// answers the send with an error (an internal error, an HTTP 500, a reset
// connection) gets the message once: the call fails as in doubt
// (Unavailable, not retryable) and exactly one remote task exists. A send
// the peer refused without acting on it (503) is retried and succeeds,
// again with exactly one task.
func TestSendNeverCreatesASecondTask(t *testing.T) {
	for _, tc := range []struct {
		name        string
		peer        Peer
		process     bool
		style       string
		wantSuccess bool
	}{
		{"jsonrpc blocking internal error", Peer{NoStreaming: true}, true, "jsonrpc-internal", false},
		{"jsonrpc streaming internal error", Peer{}, true, "jsonrpc-internal", false},
		{"rest blocking internal error", Peer{NoStreaming: true, PreferREST: true}, true, "rest-internal", false},
		{"rest streaming internal error", Peer{PreferREST: true}, true, "rest-internal", false},
		{"jsonrpc blocking http 500", Peer{NoStreaming: true}, true, "http-500", false},
		{"rest blocking connection reset", Peer{NoStreaming: true, PreferREST: true}, true, "reset", false},
		{"jsonrpc streaming connection reset", Peer{}, true, "reset", false},
		{"jsonrpc blocking 503 not processed", Peer{NoStreaming: true}, false, "", true},
		{"rest streaming 503 not processed", Peer{PreferREST: true}, false, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, direct := newWorker(t, ServerConfig{})
			f := &firstDeliveryFails{srv: srv, process: tc.process, style: tc.style, seen: map[string]bool{}}
			hs := httptest.NewServer(f)
			defer hs.Close()
			ctx := ctxT(t)
			p := tc.peer
			p.Name, p.URL = "w", hs.URL
			ts, err := NewToolset(ctx, ToolsetConfig{Peers: []Peer{p}, Policy: fastPolicy()})
			if err != nil {
				t.Fatal(err)
			}
			defer ts.Close()
			tools, _ := ts.Tools(ctx)
			res, err := tools[0].Call(ctx, json.RawMessage(`{"message":"hello once"}`))
			if tc.wantSuccess {
				if err != nil || !strings.Contains(res.Text(), "echo: hello once") {
					t.Fatalf("res = %v, err = %v", res, err)
				}
			} else {
				var fe *failure.Error
				if !errors.As(err, &fe) || fe.Kind != failure.Unavailable || fe.Retryable || fe.Kind.Retryable() ||
					!strings.Contains(fe.Message, "not sent again") || fe.Tool != "a2a__w" {
					t.Fatalf("err = %#v", err)
				}
			}
			c := clientFor(t, direct.URL, a2ago.TransportProtocolJSONRPC, nil)
			l, err := c.ListTasks(ctx, &a2ago.ListTasksRequest{})
			if err != nil {
				t.Fatal(err)
			}
			f.mu.Lock()
			sends := f.sends
			f.mu.Unlock()
			wantSends := 1
			if !tc.process {
				wantSends = 2
			}
			if len(l.Tasks) != 1 || sends != wantSends {
				t.Fatalf("remote tasks = %d, sends = %d; want 1 task and %d sends", len(l.Tasks), sends, wantSends)
			}
		})
	}
}

// answersWithoutStatus is an a2a-go executor that asks a question and,
// given the answer, sends the artifact before any status (as the JS SDK
// 0.3 peers do): the answered task is still input-required until the
// closing status.
type answersWithoutStatus struct{}

func (answersWithoutStatus) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2ago.Event, error] {
	return func(yield func(a2ago.Event, error) bool) {
		text, _ := inputText(ec.Message)
		if ec.StoredTask == nil {
			if !yield(a2ago.NewSubmittedTask(ec, ec.Message), nil) {
				return
			}
			q := a2ago.NewMessageForTask(a2ago.MessageRoleAgent, ec, a2ago.NewTextPart("Which colour?"))
			yield(a2ago.NewStatusUpdateEvent(ec, a2ago.TaskStateInputRequired, q), nil)
			return
		}
		art := a2ago.NewArtifactEvent(ec, a2ago.NewTextPart("answer: "+text))
		art.LastChunk = true
		if !yield(art, nil) {
			return
		}
		yield(a2ago.NewStatusUpdateEvent(ec, a2ago.TaskStateCompleted, nil), nil)
	}
}

func (answersWithoutStatus) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2ago.Event, error] {
	return func(yield func(a2ago.Event, error) bool) {
		yield(a2ago.NewStatusUpdateEvent(ec, a2ago.TaskStateCanceled, nil), nil)
	}
}

// TestAnswerReadUntilStatus: after answering a question, an artifact that
// comes before any status does not make the client take the answered
// input-required state for a new question: it reads on to completion, and
// the person is asked once.
func TestAnswerReadUntilStatus(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	hs := httptest.NewServer(a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(answersWithoutStatus{}, a2asrv.WithLogger(quiet))))
	defer hs.Close()
	card := &a2ago.AgentCard{Name: "asker", Description: "asks", Version: "1",
		Capabilities:        a2ago.AgentCapabilities{Streaming: true},
		SupportedInterfaces: []*a2ago.AgentInterface{a2ago.NewAgentInterface(hs.URL, a2ago.TransportProtocolJSONRPC)}}
	for _, stream := range []bool{true, false} {
		ctx := ctxT(t)
		ts, err := NewToolset(ctx, ToolsetConfig{Peers: []Peer{{Name: "w", Card: card, NoStreaming: !stream}}, Policy: fastPolicy()})
		if err != nil {
			t.Fatal(err)
		}
		var asked []string
		el := agent.ElicitorFunc(func(ctx context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
			asked = append(asked, e.Message)
			return agent.ElicitationResult{Action: agent.ElicitAccept, Content: map[string]any{"text": "teal"}}, nil
		})
		ans, err := delegator(t, ts, el).Run(ctx, "ask me")
		_ = ts.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(ans.Text, "answer: teal") || len(asked) != 1 {
			t.Fatalf("stream=%v: answer %q, questions %v", stream, ans.Text, asked)
		}
	}
}
