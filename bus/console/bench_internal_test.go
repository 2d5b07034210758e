package console

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/llm"
)

// natsChildEnv makes the test binary a NATS server (an embedded bus that
// listens) instead of running tests: the benchmarks keep the server's
// memory out of the console's process.
const natsChildEnv = "CONSOLE_BENCH_NATS_DIR"

func init() {
	dir := os.Getenv(natsChildEnv)
	if dir == "" {
		return
	}
	b, err := bus.New(context.Background(), bus.Config{Listen: "127.0.0.1:0", StoreDir: dir})
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	fmt.Println("URL", b.ClientURL())
	_, _ = io.Copy(io.Discard, os.Stdin) // until the parent closes stdin
	_ = b.Close()
	os.Exit(0)
}

// natsChild starts a NATS server in a child process and returns its URL.
func natsChild(b *testing.B) string {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), natsChildEnv+"="+b.TempDir())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
	buf := make([]byte, 256)
	n, err := out.Read(buf)
	if err != nil {
		b.Fatal(err)
	}
	line := strings.TrimSpace(string(buf[:n]))
	u, ok := strings.CutPrefix(line, "URL ")
	if !ok {
		b.Fatalf("nats child: %q", line)
	}
	return u
}

// storeRuns publishes n finished runs of four events each.
func storeRuns(b *testing.B, bb *bus.Bus, n int) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	now := time.Now()
	for i := range n {
		run := fmt.Sprintf("run_bench%06d", i)
		usage := llm.Usage{InputTokens: 100, OutputTokens: 20}
		bb.Emit(ctx, agent.Event{Type: agent.EventRunStarted, Run: run, Agent: "bench", Text: "question number " + fmt.Sprint(i), Time: now})
		bb.Emit(ctx, agent.Event{Type: agent.EventTurnStarted, Run: run, Agent: "bench", Turn: 1, Time: now,
			Context: &agent.ContextInfo{Window: 128000, Prompt: 300, System: 100, History: 200}})
		bb.Emit(ctx, agent.Event{Type: agent.EventModelTurn, Run: run, Agent: "bench", Turn: 1, Time: now, Text: "an answer", Usage: &usage})
		bb.Emit(ctx, agent.Event{Type: agent.EventFinal, Run: run, Agent: "bench", Time: now, Text: "an answer",
			Answer: &agent.Answer{Run: run, Text: "an answer", Turns: 1, Usage: usage}})
		if i%500 == 499 {
			if err := bb.Flush(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := bb.Flush(ctx); err != nil {
		b.Fatal(err)
	}
}

// consoleOf is a console of n stored runs on a NATS server of its own (a
// child process), with its index caught up, and the heap it holds.
type consoleOf struct {
	c    *Console
	srv  *httptest.Server
	heap uint64
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func newConsoleOf(b *testing.B, n int) *consoleOf {
	b.Helper()
	ctx := context.Background()
	u := natsChild(b)
	pub, err := bus.New(ctx, bus.Config{URLs: []string{u}, Name: "publisher"})
	if err != nil {
		b.Fatal(err)
	}
	storeRuns(b, pub, n)
	_ = pub.Close()
	bb, err := bus.New(ctx, bus.Config{URLs: []string{u}, Name: "console"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = bb.Close() })
	before := heapInUse()
	c, err := New(ctx, Config{Bus: bb, NoLiveQuestions: true})
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	select {
	case <-c.ix.caughtUp:
	case <-time.After(2 * time.Minute):
		b.Fatal("the index did not catch up in 2 minutes")
	}
	srv := httptest.NewServer(c.Handler())
	b.Cleanup(func() { srv.Close(); _ = c.Close() })
	co := &consoleOf{c: c, srv: srv}
	for range 5 {
		co.page(b)
	}
	if after := heapInUse(); after > before {
		co.heap = after - before
	}
	return co
}

// page fetches the first page of the runs list.
func (co *consoleOf) page(b *testing.B) {
	res, err := http.Get(co.srv.URL + "/api/runs")
	if err != nil {
		b.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), `"state":"done"`) {
		b.Fatalf("runs page: %d %.200s", res.StatusCode, body)
	}
}

// BenchmarkRunsPage opens the runs page (its first page of 50) with 10
// and with 5,000 stored runs, in the same run, and reports the time of
// each, their difference and ratio, and the console's heap in each case.
//
//	go test -run '^$' -bench BenchmarkRunsPage -benchtime 200x ./bus/console/
func BenchmarkRunsPage(b *testing.B) {
	small := newConsoleOf(b, 10)
	large := newConsoleOf(b, 5000)
	var tSmall, tLarge time.Duration
	for b.Loop() {
		t0 := time.Now()
		small.page(b)
		t1 := time.Now()
		large.page(b)
		tLarge += time.Since(t1)
		tSmall += t1.Sub(t0)
	}
	n := float64(b.N)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / n }
	b.ReportMetric(ms(tSmall), "ms/page@10")
	b.ReportMetric(ms(tLarge), "ms/page@5000")
	b.ReportMetric(ms(tLarge)-ms(tSmall), "ms-added@5000")
	b.ReportMetric(float64(small.heap)/1024, "KiB-heap@10")
	b.ReportMetric(float64(large.heap)/1024, "KiB-heap@5000")
	b.ReportMetric(float64(large.heap)/float64(max(small.heap, 1)), "heap-ratio")
}
