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
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/switchboard-dev/switchboard/a2a/internal/taskstore"
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

// benchBody is the i-th JSON-RPC SendMessage of a load.
func benchBody(i int64) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"SendMessage","params":{"message":{"messageId":"m%d","role":"ROLE_USER","parts":[{"text":"hello %d"}]}}}`, i, i, i)
}

// sendOne sends one SendMessage and checks that the answer is a completed
// task with the echoed text.
func sendOne(hc *http.Client, url string, i int64) error {
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(benchBody(i)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(b, []byte("TASK_STATE_COMPLETED")) || !bytes.Contains(b, []byte("echo: hello")) {
		return fmt.Errorf("unexpected answer: %s", b)
	}
	return nil
}

func benchHTTPClient() (*http.Client, func()) {
	tr := &http.Transport{MaxIdleConnsPerHost: benchClients, MaxConnsPerHost: benchClients}
	return &http.Client{Transport: tr}, tr.CloseIdleConnections
}

// sendLoad sends exactly n SendMessage calls from benchClients concurrent
// clients and returns the elapsed time.
func sendLoad(tb testing.TB, url string, n int) time.Duration {
	hc, done := benchHTTPClient()
	defer done()
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
				if err := sendOne(hc, url, i); err != nil {
					failed.Store(err)
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

// BenchmarkJSONRPCSendMessage16 compares, in one run, our server, a2a-go's
// default server stack around the same agent executor, and (with node
// installed) an @a2a-js/sdk 1.3.0 echo server, each in its own process,
// under 16 concurrent clients sending JSON-RPC SendMessage to an echo
// agent. Rounds are interleaved (each server in every position); each
// round lasts A2A_BENCH_ROUND (default 2s). Reported per server:
// requests/s, p50 and p99 latency, and the server process's CPU per
// request (utime+stime from /proc); and ours' ratios against each.
func BenchmarkJSONRPCSendMessage16(b *testing.B) {
	round := 2 * time.Second
	if v := os.Getenv("A2A_BENCH_ROUND"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatalf("A2A_BENCH_ROUND: %v", err)
		}
		round = d
	}
	servers := []benchTarget{startBenchChild(b, "ours"), startBenchChild(b, "a2ago")}
	if nodeAvailable() {
		servers = append(servers, startBenchNode(b))
	}
	warmUp(b, servers, round)
	b.ResetTimer()
	var res map[string]*benchStats
	for i := 0; i < b.N; i++ {
		res = measureInterleaved(b, servers, 3, round)
	}
	ours := res["ours"]
	for _, s := range servers {
		st := res[s.name]
		b.ReportMetric(st.perSecond(), s.name+"-req/s")
		b.ReportMetric(float64(st.quantile(0.50).Microseconds()), s.name+"-p50-us")
		b.ReportMetric(float64(st.quantile(0.99).Microseconds()), s.name+"-p99-us")
		b.ReportMetric(st.cpuPerRequest(), s.name+"-cpu-us/req")
		if s.name != "ours" {
			b.ReportMetric(ours.perSecond()/st.perSecond(), "ours/"+s.name+"-req/s")
			b.ReportMetric(ours.cpuPerRequest()/st.cpuPerRequest(), "ours/"+s.name+"-cpu/req")
		}
	}
}

// plainEcho is an executor without an agent: task, artifact, completed.
type plainEcho struct{}

func (plainEcho) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2ago.Event, error] {
	return func(yield func(a2ago.Event, error) bool) {
		text, _ := inputText(ec.Message)
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

// abbaLoad runs a, b, b, a rounds of per requests each and returns each
// side's total time; each side sends 2*per requests.
func abbaLoad(tb testing.TB, urlA, urlB string, per int) (tA, tB time.Duration) {
	for _, round := range []string{"a", "b", "b", "a"} {
		if round == "a" {
			tA += sendLoad(tb, urlA, per)
		} else {
			tB += sendLoad(tb, urlB, per)
		}
	}
	return tA, tB
}

// abbaNsPerOp is the time per request of one side of abbaLoad(per).
func abbaNsPerOp(d time.Duration, per int) float64 { return float64(d.Nanoseconds()) / float64(2*per) }

// BenchmarkJSONRPCSendMessage16Store isolates the task store: the same
// agent-less echo executor behind a2a-go's JSON-RPC handler, with our
// in-memory store and with a2a-go's default (gob-copying) one, 16
// concurrent clients, in one run (ABBA rounds, one process).
func BenchmarkJSONRPCSendMessage16Store(b *testing.B) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	oursHS := httptest.NewServer(a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(plainEcho{},
		a2asrv.WithTaskStore(taskstore.NewMemory(taskstore.MemoryConfig{})), a2asrv.WithLogger(quiet))))
	defer oursHS.Close()
	defaultHS := httptest.NewServer(a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(plainEcho{}, a2asrv.WithLogger(quiet))))
	defer defaultHS.Close()
	sendLoad(b, oursHS.URL, benchClients)
	sendLoad(b, defaultHS.URL, benchClients)
	per := max(b.N/2, benchClients) // each side runs two rounds: b.N requests or more
	b.ResetTimer()
	tDefault, tOurs := abbaLoad(b, defaultHS.URL, oursHS.URL, per)
	b.StopTimer()
	perOp := func(d time.Duration) float64 { return abbaNsPerOp(d, per) }
	b.ReportMetric(perOp(tOurs), "ours-ns/op")
	b.ReportMetric(perOp(tDefault), "a2ago-default-ns/op")
	b.ReportMetric(perOp(tDefault)/perOp(tOurs), "speedup-vs-a2ago")
}
