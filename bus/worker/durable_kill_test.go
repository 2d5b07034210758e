package worker_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/failure"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/worker"
	"github.com/switchboard-dev/switchboard/llm"
)

// The environment of a durable worker process (the test binary
// re-executed by TestDurableWorkersKilled).
const (
	envDurableURL   = "SWITCHBOARD_DURABLE_URL"
	envDurableToken = "SWITCHBOARD_DURABLE_TOKEN"
	envDurableID    = "SWITCHBOARD_DURABLE_ID"
	// envChargeLog is the file the charge tool appends each real
	// execution to ("<run> <call>" per line).
	envChargeLog = "SWITCHBOARD_CHARGE_LOG"
)

// durableTurns is the number of tool turns of the scripted run; each
// calls charge (not idempotent) and lookup (read-only) in parallel.
const durableTurns = 3

// durableModel plays the script from the conversation alone (a resumed
// run in another process gets the same next turn): durableTurns turns of
// two calls, then the answer. It pauses a little, so that kills land in
// model turns too.
type durableModel struct{}

func (durableModel) Name() string { return "durable-script" }

func (durableModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	pause(ctx, 10)
	turns := 0
	for _, m := range req.Messages {
		if m.Role == llm.RoleTool {
			turns++
		}
	}
	if turns >= durableTurns {
		return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Text: fmt.Sprintf("done after %d turns", turns)}}, nil
	}
	return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
		{ID: fmt.Sprintf("charge%d", turns), Name: "charge", Args: json.RawMessage(fmt.Sprintf(`{"n":%d}`, turns))},
		{ID: fmt.Sprintf("lookup%d", turns), Name: "lookup", Args: json.RawMessage(`{}`)},
	}}}, nil
}

func pause(ctx context.Context, maxMS int) {
	t := time.NewTimer(time.Duration(mrand.IntN(maxMS+1)) * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// durableTools: charge records each real execution in the log file (one
// O_APPEND write) before it answers; lookup changes nothing.
func durableTools(logPath string) []agent.Tool {
	charge := agent.NewFuncTool(agent.ToolSpec{Name: "charge", Description: "Charges a card (not idempotent)."},
		func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
			pause(ctx, 20)
			c, ok := agent.CallFromContext(ctx)
			if !ok {
				return nil, fmt.Errorf("charge called outside a run")
			}
			f, err := os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
			if err != nil {
				return nil, err
			}
			_, err = fmt.Fprintf(f, "%s %s\n", c.Run, c.ID)
			f.Close()
			if err != nil {
				return nil, err
			}
			pause(ctx, 20)
			return agent.TextResult("charged " + c.ID), nil
		})
	lookup := agent.NewFuncTool(agent.ToolSpec{Name: "lookup", Description: "Looks up a price.", ReadOnly: true},
		func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
			pause(ctx, 20)
			return agent.TextResult("42"), nil
		})
	return []agent.Tool{charge, lookup}
}

// durableWorkerProcess serves the durable agent until killed (or
// interrupted).
func durableWorkerProcess() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	id := os.Getenv(envDurableID)
	// Every handled failure is also reported on <prefix>.failures, at
	// once, on the connection the run's store writes go through: a call
	// left in doubt is reported before its result is stored.
	var bp atomic.Pointer[bus.Bus]
	policy := failure.NewPolicy(failure.PolicyConfig{OnFailure: func(ctx context.Context, o failure.Outcome) {
		if b := bp.Load(); b != nil {
			b.ReportFailure(ctx, o)
		}
	}})
	b, err := bus.New(ctx, bus.Config{URLs: []string{os.Getenv(envDurableURL)}, Token: os.Getenv(envDurableToken), Name: id, Policy: policy})
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	defer b.Close()
	bp.Store(b)
	st, err := bus.OpenStore(ctx, b, bus.StoreConfig{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	a, err := agent.New(ctx, agent.Config{Name: "durable", Model: durableModel{}, Tools: durableTools(os.Getenv(envChargeLog)),
		Permissions: agent.AllowAll(), Durable: agent.Durability{Store: st}, Policy: policy, Budget: agent.Budget{MaxTurns: durableTurns + 2}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	srv, err := worker.Serve(ctx, b, a, worker.ServeConfig{ID: id, MaxConcurrent: 16})
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	<-srv.Done()
	return 0
}

// startDurableWorker re-executes the test binary as a durable worker.
func startDurableWorker(t *testing.T, url, token, id, chargeLog string) *process {
	t.Helper()
	log, err := os.Create(t.TempDir() + "/" + id + ".log")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envDurableURL+"="+url, envDurableToken+"="+token, envDurableID+"="+id, envChargeLog+"="+chargeLog)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, log: log}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = p.wait()
		if out, _ := os.ReadFile(log.Name()); t.Failed() && len(out) > 0 {
			t.Logf("%s output:\n%s", id, firstN(string(out), 2000))
		}
		log.Close()
	})
	return p
}

// durableResult is what the test saw of one run through the pool.
type durableResult struct {
	final     agent.Event
	err       error
	lost      int             // attempts that ended with the worker lost
	inDoubt   map[string]bool // calls reported in doubt (failure events)
	remoteRun string
}

// TestDurableWorkersKilled SIGKILLs worker processes at random points of
// durable multi-turn, multi-tool runs, until at least 100 run attempts were
// cut: each cut run resumes on another worker from its checkpoint. Then:
// no run is lost (each ends with its answer), no non-idempotent call ran
// twice (the charge log), every history is valid (each call has one
// result), and every call left in doubt was reported.
func TestDurableWorkersKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills worker processes")
	}
	const wantCuts = 100
	token := rand.Text()
	host := newBus(t, bus.Config{Listen: "127.0.0.1:0", Token: token, StoreDir: t.TempDir()})
	ctx := ctxT(t, 180*time.Second)
	chargeLog := t.TempDir() + "/charges.log"
	st, err := bus.OpenStore(ctx, host, bus.StoreConfig{})
	if err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	procs := map[string]*process{}
	nextID := 0
	spawn := func() {
		mu.Lock()
		defer mu.Unlock()
		nextID++
		id := fmt.Sprint("w", nextID)
		procs[id] = startDurableWorker(t, host.ClientURL(), token, id, chargeLog)
	}
	spawn()
	spawn()
	reports, err := host.SubscribeFailures()
	if err != nil {
		t.Fatal(err)
	}
	var inDoubtReports atomic.Int64
	rctx, stopReports := context.WithCancel(ctx)
	reportsDone := make(chan struct{})
	go func() {
		defer close(reportsDone)
		for r, err := range reports.All(rctx) {
			if err == nil && r.Kind == failure.InDoubt && r.Tool == "charge" {
				inDoubtReports.Add(1)
			}
		}
	}()
	// The heartbeats are slower than the package's other tests: this test
	// loads the machine with process starts.
	pool := newPool(t, host, "durable", worker.PoolConfig{Heartbeat: 200 * time.Millisecond, MissedHeartbeats: 5, CapacityWait: 30 * time.Second,
		Policy: testkitPolicy(1000)})
	waitFor(t, "two worker processes", func() bool {
		infos, err := pool.Workers(ctx)
		return err == nil && len(infos) >= 2
	})

	// Runs, 16 at a time, until enough cuts.
	var cuts atomic.Int64
	var results []*durableResult
	var rmu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	stopRuns := make(chan struct{})
	go func() {
		defer close(stopRuns)
		for i := 0; cuts.Load() < wantCuts && ctx.Err() == nil && i < 5000; i++ {
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				r := runDurable(ctx, pool, fmt.Sprint("order ", i))
				cuts.Add(int64(r.lost))
				rmu.Lock()
				results = append(results, r)
				rmu.Unlock()
			}()
		}
	}()
	// The killer: a random worker, at a random moment; a new one replaces it.
	kills := 0
	runsOver := func() bool {
		select {
		case <-stopRuns:
			return true
		default:
			return false
		}
	}
	for cuts.Load() < wantCuts && ctx.Err() == nil && !runsOver() {
		time.Sleep(time.Duration(150+mrand.IntN(300)) * time.Millisecond)
		mu.Lock()
		var ids []string
		for id := range procs {
			ids = append(ids, id)
		}
		victim := procs[ids[mrand.IntN(len(ids))]]
		for id, p := range procs {
			if p == victim {
				delete(procs, id)
			}
		}
		mu.Unlock()
		_ = victim.cmd.Process.Signal(syscall.SIGKILL)
		_ = victim.wait()
		kills++
		spawn()
		// The next kill waits for the new worker: a kill with no other
		// worker serving tests CapacityWait, not resuming.
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if infos, err := pool.Workers(ctx); err == nil && len(infos) >= 2 {
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				t.Fatalf("no replacement worker after 60s (%d kills, %d cut attempts)", kills, cuts.Load())
			}
		}
	}
	<-stopRuns
	wg.Wait()
	time.Sleep(100 * time.Millisecond) // the last reports in flight
	stopReports()
	<-reportsDone
	reports.Close()
	t.Logf("%d runs, %d kills, %d cut attempts", len(results), kills, cuts.Load())
	if cuts.Load() < wantCuts {
		t.Errorf("%d run attempts cut by %d kills in %d runs, want at least %d", cuts.Load(), kills, len(results), wantCuts)
	}
	checkDurableRuns(t, ctx, st, results, chargeLog, int(inDoubtReports.Load()))
}

// testkitPolicy retries quickly and often, and opens no circuit for lost
// workers.
func testkitPolicy(attempts int) failure.Policy {
	return failure.NewPolicy(failure.PolicyConfig{MaxAttempts: attempts, InitialBackoff: 10 * time.Millisecond,
		MaxBackoff: 50 * time.Millisecond, BreakerFailures: 1 << 30})
}

// runDurable runs input on the pool, noting lost workers and in-doubt
// reports.
func runDurable(ctx context.Context, pool *worker.Pool, input string) *durableResult {
	r := &durableResult{inDoubt: map[string]bool{}}
	for ev, err := range pool.Stream(ctx, input) {
		if ev.Type == agent.EventFailure && ev.Failure != nil {
			switch {
			case ev.Failure.Kind == failure.Transient && strings.Contains(ev.Failure.Message, "stopped answering"):
				r.lost++
			case ev.Failure.Kind == failure.InDoubt && ev.Call != nil:
				r.inDoubt[ev.Call.ID] = true
			}
		}
		if err != nil {
			r.err = err
		}
		if ev.Type == agent.EventFinal || ev.Type == agent.EventRunFailed {
			r.final = ev
			r.remoteRun = ev.Run
		}
	}
	return r
}

// checkDurableRuns checks the runs' outcomes against the store and the
// charge log.
func checkDurableRuns(t *testing.T, ctx context.Context, st agent.Store, results []*durableResult, chargeLog string, reported int) {
	t.Helper()
	charged := map[string]int{}
	f, err := os.Open(chargeLog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		charged[sc.Text()]++
	}
	for k, n := range charged {
		if n > 1 {
			t.Errorf("charge %q ran %d times", k, n)
		}
	}
	lost, inDoubt, unreported := 0, 0, 0
	for _, r := range results {
		if r.err != nil || r.final.Type != agent.EventFinal {
			lost++
			t.Errorf("a run was lost: %v", r.err)
			continue
		}
		cp, err := st.LoadCheckpoint(ctx, r.remoteRun)
		if err != nil || cp.State != "done" {
			t.Errorf("run %s: checkpoint %+v, %v", r.remoteRun, cp, err)
			continue
		}
		sess, err := st.LoadSession(ctx, cp.Session)
		if err != nil {
			t.Errorf("run %s: session: %v", r.remoteRun, err)
			continue
		}
		checkHistory(t, sess.History)
		for _, m := range sess.History {
			for _, res := range m.ToolResults {
				if res.Name != "charge" {
					continue
				}
				ran := charged[r.remoteRun+" "+res.CallID]
				switch {
				case !res.IsError && ran != 1:
					t.Errorf("run %s call %s: result %q but ran %d times", r.remoteRun, res.CallID, res.Content, ran)
				case res.IsError:
					inDoubt++
					if !r.inDoubt[res.CallID] {
						unreported++
					}
				}
			}
		}
	}
	// A report in the run's events can be lost with its process (events
	// leave through a buffer); the failure report goes out before the
	// in-doubt result is stored, so the reports count every in-doubt call.
	t.Logf("%d runs lost, %d charges in doubt (%d reports on the bus; %d missing from the caller's events), %d charges ran",
		lost, inDoubt, reported, unreported, len(charged))
	if reported < inDoubt {
		t.Errorf("%d in-doubt calls, %d reported", inDoubt, reported)
	}
}

// checkHistory fails unless every tool call in h has exactly one result,
// in the tool message right after its assistant message.
func checkHistory(t *testing.T, h []llm.Message) {
	t.Helper()
	for i, m := range h {
		if len(m.ToolCalls) == 0 {
			continue
		}
		if i+1 >= len(h) || h[i+1].Role != llm.RoleTool || len(h[i+1].ToolResults) != len(m.ToolCalls) {
			t.Errorf("message %d's %d tool calls lack their results", i, len(m.ToolCalls))
			continue
		}
		got := map[string]int{}
		for _, r := range h[i+1].ToolResults {
			got[r.CallID]++
		}
		for _, c := range m.ToolCalls {
			if got[c.ID] != 1 {
				t.Errorf("call %s of message %d has %d results", c.ID, i, got[c.ID])
			}
		}
	}
}
