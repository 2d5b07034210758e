package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/store"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// benchCheckpoint is a checkpoint of a run six turns in: ten messages,
// tool calls and results, about 3 KB of JSON.
func benchCheckpoint(run string) *agent.Checkpoint {
	var msgs []llm.Message
	msgs = append(msgs, llm.Message{Role: llm.RoleUser, Text: "Summarise the notes and mail them to the team."})
	for i := range 3 {
		id := fmt.Sprint("c", i)
		msgs = append(msgs,
			llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: id, Name: "mcp__files__read", Args: json.RawMessage(`{"path":"notes.txt"}`)}}},
			llm.Message{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: id, Name: "mcp__files__read", Content: strings.Repeat("notes line ", 60)}}})
	}
	return &agent.Checkpoint{Run: run, Session: "bench", Agent: "bench", Owner: "o1", State: "running",
		Input: msgs[0].Text, Messages: msgs, Turn: 4, Usage: llm.Usage{InputTokens: 1200, OutputTokens: 300},
		ToolCalls: 3, Started: time.Now()}
}

// rawStream creates a file-storage stream for raw publishes, on the same
// server as the store (one message per subject kept, as the store's
// buckets do).
func rawStream(tb testing.TB, ctx context.Context, b *bus.Bus) string {
	tb.Helper()
	_, err := b.JetStream().CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: "RAWBENCH", Subjects: []string{"rawbench.>"},
		Storage: jetstream.FileStorage, MaxMsgsPerSubject: 1})
	if err != nil {
		tb.Fatal(err)
	}
	return "rawbench.cp"
}

// BenchmarkCheckpoint writes one run checkpoint with the JetStream store
// (SaveCheckpoint: encode, one publish with the expected last subject
// sequence, its ack) against a raw nats.go JetStream publish-with-ack of
// the same encoded bytes to a stream with the same storage, on the same
// server, alternating in one run. The bound is store/raw <= 2.
func BenchmarkCheckpoint(b *testing.B) {
	bb := newBus(b, bus.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	s, err := store.OpenAgent(ctx, bb, store.AgentConfig{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	cp := benchCheckpoint("r1")
	data, _ := json.Marshal(cp)
	b.SetBytes(int64(len(data)))
	js := bb.JetStream()
	subject := rawStream(b, ctx, bb)
	raw := func(n int) {
		for range n {
			if _, err := js.Publish(ctx, subject, data); err != nil {
				b.Fatal(err)
			}
		}
	}
	rev, err := s.SaveCheckpoint(ctx, cp, 0)
	if err != nil {
		b.Fatal(err)
	}
	viaStore := func(n int) {
		for range n {
			cp.Turn++
			if rev, err = s.SaveCheckpoint(ctx, cp, rev); err != nil {
				b.Fatal(err)
			}
		}
	}
	testkit.CompareRatio(b, raw, viaStore)
}

// TestCheckpointIsOneRoundTrip checks the benchmark's arithmetic: a
// checkpoint written after the previous one in this process costs the
// connection one message out and one in (the publish and its ack), and the
// server stores one message per checkpoint, of about the record's size.
func TestCheckpointIsOneRoundTrip(t *testing.T) {
	b := newBus(t, bus.Config{})
	ctx := ctxT(t, 30*time.Second)
	s, err := store.OpenAgent(ctx, b, store.AgentConfig{Name: "count"})
	if err != nil {
		t.Fatal(err)
	}
	cp := benchCheckpoint("r1")
	rev, err := s.SaveCheckpoint(ctx, cp, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, err := b.JetStream().Stream(ctx, "KV_COUNT_RUNS")
	if err != nil {
		t.Fatal(err)
	}
	info0, _ := st.Info(ctx)
	before := b.Conn().Stats()
	const n = 50
	for range n {
		cp.Turn++
		if rev, err = s.SaveCheckpoint(ctx, cp, rev); err != nil {
			t.Fatal(err)
		}
	}
	after := b.Conn().Stats()
	info, _ := st.Info(ctx)
	if out, in := after.OutMsgs-before.OutMsgs, after.InMsgs-before.InMsgs; out != n || in != n {
		t.Errorf("%d checkpoints sent %d messages and received %d, want %d and %d", n, out, in, n, n)
	}
	if got := info.State.LastSeq - info0.State.LastSeq; got != n {
		t.Errorf("the server stored %d messages for %d checkpoints", got, n)
	}
	if info.State.Msgs != 1 {
		t.Errorf("the runs bucket holds %d messages for one run, want 1 (only the latest checkpoint)", info.State.Msgs)
	}
	data, _ := json.Marshal(cp)
	if sent := after.OutBytes - before.OutBytes; sent < uint64(n*len(data)) || sent > uint64(n*(len(data)+200)) {
		t.Errorf("%d checkpoints of %d bytes sent %d bytes", n, len(data), sent)
	}
}

// tenCallAgent is an agent whose scripted run makes ten tool calls (five
// turns of two, one of them side-effecting) and answers, on st (nil: no
// store).
func tenCallAgent(tb testing.TB, st agent.Store) *agent.Agent {
	tb.Helper()
	work := agent.NewFuncTool(agent.ToolSpec{Name: "work", Description: "Works."},
		func(context.Context, json.RawMessage) (*agent.Result, error) { return agent.TextResult("worked"), nil })
	read := agent.NewFuncTool(agent.ToolSpec{Name: "read", Description: "Reads.", ReadOnly: true},
		func(context.Context, json.RawMessage) (*agent.Result, error) { return agent.TextResult("read"), nil })
	model := llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
		turns := 0
		for _, m := range req.Messages {
			if m.Role == llm.RoleTool {
				turns++
			}
		}
		if turns >= 5 {
			return llm.Say("done")
		}
		return llm.Calls(llm.CallTool(fmt.Sprint("w", turns), "work", map[string]any{}), llm.CallTool(fmt.Sprint("r", turns), "read", map[string]any{}))
	}))
	a, err := agent.New(context.Background(), agent.Config{Name: "ten", Model: model, Tools: []agent.Tool{work, read},
		Permissions: agent.AllowAll(), Durable: agent.Durable(st, 0)})
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

// BenchmarkDurableRun runs the ten-call scripted run in memory (no store)
// and durably on the JetStream store (a checkpoint after each model turn
// and each tool result, intents and results of the five side-effecting
// calls), alternating in one run; durable/memory is the ratio.
func BenchmarkDurableRun(b *testing.B) {
	bb := newBus(b, bus.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	st, err := store.OpenAgent(ctx, bb, store.AgentConfig{Name: "benchrun"})
	if err != nil {
		b.Fatal(err)
	}
	mem, durable := tenCallAgent(b, nil), tenCallAgent(b, st)
	run := func(a *agent.Agent) func(int) {
		return func(n int) {
			for range n {
				ans, err := a.Run(ctx, "go")
				if err != nil || ans.ToolCalls != 10 {
					b.Fatalf("%+v, %v", ans, err)
				}
			}
		}
	}
	testkit.CompareRatio(b, run(mem), run(durable))
}

// parkRuns parks n runs of a durable agent on st, 8 at a time, and returns
// the agent.
func parkRuns(tb testing.TB, ctx context.Context, st agent.Store, n int) *agent.Agent {
	tb.Helper()
	pay := agent.NewFuncTool(agent.ToolSpec{Name: "pay", Description: "Pays."},
		func(context.Context, json.RawMessage) (*agent.Result, error) { return agent.TextResult("paid"), nil })
	model := llm.NewCyclic(llm.Calls(llm.CallTool("c1", "pay", map[string]any{"amount": 5})))
	a, err := agent.New(ctx, agent.Config{Name: "parker", Model: model, Tools: []agent.Tool{pay},
		Permissions: &agent.Permissions{Rules: []agent.Rule{{Tool: "pay", Permission: agent.Ask}}},
		Durable:     agent.Durable(st, -1)})
	if err != nil {
		tb.Fatal(err)
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	var failed atomic.Int64
	for range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if _, err := a.Run(ctx, "pay 5"); !errors.Is(err, failure.Parked) {
				failed.Add(1)
			}
		})
	}
	wg.Wait()
	if failed.Load() > 0 {
		tb.Fatalf("%d of %d runs did not park", failed.Load(), n)
	}
	return a
}

// heap is the live heap after a collection.
func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkParkedRuns parks 10,000 runs on a permission question and
// reports what they hold once parked: goroutines and live heap per run in
// this process, the agent's, whose NATS server runs in a process of its own
// (as a deployment's does). The heap is measured against the process after
// 500 parked runs first (one-time allocations: connection buffers, JSON
// encoders' caches).
func BenchmarkParkedRuns(b *testing.B) {
	const warm, n = 500, 10_000
	url := natsServerProcess(b)
	for i := range b.N {
		b.StopTimer()
		bb := newBus(b, bus.Config{URLs: []string{url}})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		st, err := store.OpenAgent(ctx, bb, store.AgentConfig{Name: fmt.Sprint("parked", i)})
		if err != nil {
			b.Fatal(err)
		}
		a0 := parkRuns(b, ctx, st, warm)
		g0, h0 := runtime.NumGoroutine(), heap()
		b.StartTimer()
		a := parkRuns(b, ctx, st, n)
		b.StopTimer()
		g1, h1 := runtime.NumGoroutine(), heap()
		b.ReportMetric(float64(g1-g0)/n, "goroutines/run")
		b.ReportMetric(float64(int64(h1)-int64(h0))/n, "heap-B/run")
		runtime.KeepAlive(a)
		runtime.KeepAlive(a0)
		cancel()
	}
}

// TestParkedRunsHoldNothing checks BenchmarkParkedRuns' arithmetic on
// 600 runs (200 first, then 400 measured), against a NATS server process:
// the store holds one pending question and one parked checkpoint per run,
// no goroutine is left, and the live heap grew by under 2 KB per measured
// run.
func TestParkedRunsHoldNothing(t *testing.T) {
	const warm, n = 200, 400
	b := newBus(t, bus.Config{URLs: []string{natsServerProcess(t)}})
	ctx := ctxT(t, 60*time.Second)
	st, err := store.OpenAgent(ctx, b, store.AgentConfig{Name: "parkcount"})
	if err != nil {
		t.Fatal(err)
	}
	parkRuns(t, ctx, st, warm)
	g0, h0 := runtime.NumGoroutine(), heap()
	a := parkRuns(t, ctx, st, n)
	g1, h1 := runtime.NumGoroutine(), heap()
	// A transient goroutine of the client (a timer, a flush) may be
	// running at the count: wait for it to end; 400 parked runs holding
	// one each would not.
	for deadline := time.Now().Add(3 * time.Second); g1 > g0 && time.Now().Before(deadline); g1 = runtime.NumGoroutine() {
		time.Sleep(50 * time.Millisecond)
	}
	if g1 > g0 {
		t.Errorf("%d goroutines before the runs, %d after %d parked", g0, g1, n)
	}
	per := (int64(h1) - int64(h0)) / n
	t.Logf("%d bytes of live heap per parked run", per)
	if per > 2048 {
		t.Errorf("the live heap grew by %d bytes per parked run", per)
	}
	inbox, err := a.Inbox(ctx)
	if err != nil || len(inbox) != warm+n {
		t.Fatalf("inbox: %d questions, %v; want %d", len(inbox), err, warm+n)
	}
	runs, err := st.ListRuns(ctx)
	if err != nil || len(runs) != warm+n {
		t.Fatalf("%d runs stored, %v; want %d", len(runs), err, warm+n)
	}
	for _, id := range runs[:20] {
		if cp, err := st.LoadCheckpoint(ctx, id); err != nil || cp.State != "parked" {
			t.Errorf("run %s: %+v, %v", id, cp, err)
		}
	}
	info, err := b.JetStream().Stream(ctx, "KV_PARKCOUNT_QUESTIONS")
	if err != nil {
		t.Fatal(err)
	}
	if si, _ := info.Info(ctx); si.State.Msgs != warm+n {
		t.Errorf("the questions bucket holds %d messages, want %d", si.State.Msgs, warm+n)
	}
}

// TestDurableRunWrites checks BenchmarkDurableRun's arithmetic: the
// durable ten-call run writes, on the server, one checkpoint when it
// starts, one per model turn that calls tools (5), one per result of a
// read-only call (5) and one when it ends; an intent and a result for each
// of its five side-effecting calls (their results' checkpoints); and its
// session twice (taken, then given its messages): 24 writes.
func TestDurableRunWrites(t *testing.T) {
	b := newBus(t, bus.Config{})
	ctx := ctxT(t, 30*time.Second)
	st, err := store.OpenAgent(ctx, b, store.AgentConfig{Name: "runcount"})
	if err != nil {
		t.Fatal(err)
	}
	seq := func(stream string) uint64 {
		s, err := b.JetStream().Stream(ctx, stream)
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.State.LastSeq
	}
	a := tenCallAgent(t, st)
	runs0, sess0 := seq("KV_RUNCOUNT_RUNS"), seq("KV_RUNCOUNT_SESSIONS")
	ans, err := a.Run(ctx, "go")
	if err != nil || ans.ToolCalls != 10 {
		t.Fatalf("%+v, %v", ans, err)
	}
	if got, want := seq("KV_RUNCOUNT_RUNS")-runs0, uint64(1+5+5+1+5+5); got != want {
		t.Errorf("the run wrote %d checkpoints and call records, want %d", got, want)
	}
	if got := seq("KV_RUNCOUNT_SESSIONS") - sess0; got != 2 {
		t.Errorf("the run wrote its session %d times, want 2", got)
	}
}
