package a2a

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/switchboard-dev/switchboard/a2a/store"
	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
)

const benchClients = 16

// echoAgent answers every message with one scripted model turn.
func echoAgent(tb testing.TB) *agent.Agent {
	ag, err := agent.New(context.Background(), agent.Config{Name: "echo", Model: llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
		return llm.Say("echo: " + lastUser(req))
	}))})
	if err != nil {
		tb.Fatal(err)
	}
	return ag
}

// sendLoad sends n JSON-RPC SendMessage calls from benchClients concurrent
// clients and returns the elapsed time.
func sendLoad(tb testing.TB, url string, n int) time.Duration {
	tr := &http.Transport{MaxIdleConnsPerHost: benchClients, MaxConnsPerHost: benchClients}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for c := 0; c < benchClients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"SendMessage","params":{"message":{"messageId":"m%d","role":"ROLE_USER","parts":[{"text":"hello %d"}]}}}`, i, i, i)
				req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(body)))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("A2A-Version", "1.0")
				resp, err := hc.Do(req)
				if err != nil {
					failed.Store(err)
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if !bytes.Contains(b, []byte("TASK_STATE_COMPLETED")) || !bytes.Contains(b, []byte("echo: hello")) {
					failed.Store(fmt.Errorf("unexpected answer: %s", b))
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		tb.Fatal(err)
	}
	return time.Since(start)
}

// BenchmarkJSONRPCSendMessage16 compares, in one run, 16 concurrent
// clients sending JSON-RPC SendMessage to an echo agent served by our
// server, and by a2a-go's default server stack (its gob-copying in-memory
// store, no version or auth middleware) around the same agent executor;
// with node installed, an @a2a-js/sdk 1.3.0 echo server is measured too.
// Reported: ns/op of each and ours' speedup over each.
func BenchmarkJSONRPCSendMessage16(b *testing.B) {
	ours, err := NewServer(context.Background(), ServerConfig{Agent: echoAgent(b)})
	if err != nil {
		b.Fatal(err)
	}
	defer ours.Close()
	oursHS := httptest.NewServer(ours)
	defer oursHS.Close()

	basis, err := NewServer(context.Background(), ServerConfig{Agent: echoAgent(b)})
	if err != nil {
		b.Fatal(err)
	}
	defer basis.Close()
	defaultHS := httptest.NewServer(a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(&executor{s: basis}, a2asrv.WithLogger(basis.slogger()))))
	defer defaultHS.Close()

	jsURL := ""
	if nodeAvailable() {
		jsURL = "http://127.0.0.1:" + startNode(b, "bench-js-server.mjs") + "/a2a/jsonrpc"
	}

	// Warm up every server (connections, JIT for node).
	n := max(b.N, benchClients)
	sendLoad(b, oursHS.URL+JSONRPCPath, benchClients)
	sendLoad(b, defaultHS.URL, benchClients)
	if jsURL != "" {
		sendLoad(b, jsURL, 4*benchClients)
	}
	b.ResetTimer()
	// ABBA rounds, so that neither server always runs first (warm-up, GC
	// debt and the machine's other load shift between rounds).
	var tDefault, tOurs, tJS time.Duration
	for _, round := range []string{"default", "ours", "ours", "default"} {
		if round == "default" {
			tDefault += sendLoad(b, defaultHS.URL, n/4+1)
		} else {
			tOurs += sendLoad(b, oursHS.URL+JSONRPCPath, n/4+1)
		}
	}
	if jsURL != "" {
		tJS = sendLoad(b, jsURL, 2*(n/4+1)) * 2
	}
	n = 4 * (n/4 + 1)
	b.StopTimer()
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(n) }
	b.ReportMetric(per(tOurs), "ours-ns/op")
	b.ReportMetric(per(tDefault), "a2ago-default-ns/op")
	b.ReportMetric(per(tDefault)/per(tOurs), "speedup-vs-a2ago")
	if tJS > 0 {
		b.ReportMetric(per(tJS), "js-sdk-ns/op")
		b.ReportMetric(per(tJS)/per(tOurs), "speedup-vs-js")
	}
}

// plainEcho is an executor without an agent: task, artifact, completed.
type plainEcho struct{}

func (plainEcho) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2ago.Event, error] {
	return func(yield func(a2ago.Event, error) bool) {
		text, _ := InputText(ec.Message)
		if !yield(a2ago.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		art := a2ago.NewArtifactEvent(ec, a2ago.NewTextPart("echo: "+text))
		art.LastChunk = true
		if !yield(art, nil) {
			return
		}
		yield(a2ago.NewStatusUpdateEvent(ec, a2ago.TaskStateCompleted, nil), nil)
	}
}

func (plainEcho) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2ago.Event, error] {
	return func(yield func(a2ago.Event, error) bool) {
		yield(a2ago.NewStatusUpdateEvent(ec, a2ago.TaskStateCanceled, nil), nil)
	}
}

// BenchmarkJSONRPCSendMessage16Store isolates the task store: the same
// agent-less echo executor behind a2a-go's JSON-RPC handler, with our
// in-memory store and with a2a-go's default (gob-copying) one, 16
// concurrent clients, in one run.
func BenchmarkJSONRPCSendMessage16Store(b *testing.B) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	oursHS := httptest.NewServer(a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(plainEcho{},
		a2asrv.WithTaskStore(store.NewMemory(store.MemoryConfig{})), a2asrv.WithLogger(quiet))))
	defer oursHS.Close()
	defaultHS := httptest.NewServer(a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(plainEcho{}, a2asrv.WithLogger(quiet))))
	defer defaultHS.Close()
	n := max(b.N, benchClients)
	sendLoad(b, oursHS.URL, benchClients)
	sendLoad(b, defaultHS.URL, benchClients)
	b.ResetTimer()
	var tDefault, tOurs time.Duration
	for _, round := range []string{"default", "ours", "ours", "default"} { // ABBA
		if round == "default" {
			tDefault += sendLoad(b, defaultHS.URL, n/4+1)
		} else {
			tOurs += sendLoad(b, oursHS.URL, n/4+1)
		}
	}
	n = 4 * (n/4 + 1)
	b.StopTimer()
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(n) }
	b.ReportMetric(per(tOurs), "ours-ns/op")
	b.ReportMetric(per(tDefault), "a2ago-default-ns/op")
	b.ReportMetric(per(tDefault)/per(tOurs), "speedup-vs-a2ago")
}
