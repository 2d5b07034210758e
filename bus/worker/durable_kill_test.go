package worker_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/store"
	"github.com/switchboard-dev/switchboard/bus/worker"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
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

// durableResult is what the test saw of one run through the pool.
type durableResult struct {
	final     agent.Event
	err       error
	lost      int             // attempts that ended with the worker lost
	inDoubt   map[string]bool // calls reported in doubt (failure events)
	remoteRun string
}

// Timings of TestDurableWorkersKilled.
const (
	killWorkers     = 100 // worker processes SIGKILLed while callers live
	killCuts        = 100 // run attempts those kills must cut, at least
	killOrphanAfter = time.Second
	killAlive       = 3 // worker processes kept serving
	killCallers     = 2 // caller processes killed, each with its runs
)

// TestDurableWorkersKilled SIGKILLs worker processes at random points of
// durable multi-turn, multi-tool runs, 100 times, cutting at least 100 run
// attempts: each cut run resumes on another worker from its checkpoint
// (the caller's pool resumes it, or an orphan sweeper first, which the
// pool's retry then follows). Then callers die too: caller processes
// starting runs are killed together with the workers running them, and
// the workers' orphan sweepers finish those runs. Checked: no run is lost
// (each ends with its answer, and every run in the store ends done), no
// non-idempotent call ran twice (the charge log), every history is valid
// (each call has one result), and every call left in doubt was reported.
func TestDurableWorkersKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills worker processes")
	}
	token := rand.Text()
	host := newBus(t, bus.Config{Listen: "127.0.0.1:0", Token: token, StoreDir: t.TempDir()})
	ctx := ctxT(t, 180*time.Second)
	chargeLog := t.TempDir() + "/charges.log"
	st, err := store.OpenAgent(ctx, host, store.AgentConfig{})
	if err != nil {
		t.Fatal(err)
	}
	env := []string{envDurableURL + "=" + host.ClientURL(), envDurableToken + "=" + token, envChargeLog + "=" + chargeLog,
		envDurableOrphanMS + "=" + fmt.Sprint(killOrphanAfter.Milliseconds())}
	k := &killer{t: t, env: env, procs: map[string]*process{}}
	for range killAlive {
		k.spawn()
	}
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
	k.pool = newPool(t, host, "durable", worker.PoolConfig{Heartbeat: 200 * time.Millisecond, MissedHeartbeats: 5, CapacityWait: 30 * time.Second,
		Policy: testkitPolicy(1000)})
	waitLong(t, "the worker processes", func() bool { return len(k.ready()) >= killAlive })
	start := time.Now()

	// Phase 1: runs, 16 at a time, while a worker is killed every few
	// hundred milliseconds, until 100 kills have cut at least 100 attempts.
	var cuts atomic.Int64
	var results []*durableResult
	var rmu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	stopRuns := make(chan struct{})
	enough := func() bool { return cuts.Load() >= killCuts && k.kills >= killWorkers }
	var killsDone atomic.Bool
	go func() {
		defer close(stopRuns)
		for i := 0; !killsDone.Load() && ctx.Err() == nil && i < 5000; i++ {
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				r := runDurable(ctx, k.pool, fmt.Sprint("order ", i))
				cuts.Add(int64(r.lost))
				rmu.Lock()
				results = append(results, r)
				rmu.Unlock()
			}()
		}
	}()
	for !enough() && ctx.Err() == nil {
		time.Sleep(time.Duration(50+mrand.IntN(150)) * time.Millisecond)
		k.killOne(ctx)
	}
	killsDone.Store(true)
	<-stopRuns
	wg.Wait()
	phase1, kills1 := time.Since(start), k.kills

	// Phase 2: callers die with the workers running their runs; the
	// sweepers finish them.
	for c := range killCallers {
		k.killCaller(ctx, c)
	}
	runs := waitStoredRunsDone(t, ctx, st, 60*time.Second)
	orphaned := 0
	for _, p := range k.all {
		orphaned += p.logLines(orphanLogLine)
	}
	t.Logf("phase 1: %d runs, %d kills, %d cut attempts, %s; phase 2: %d callers and %d workers killed; %d runs stored, %d orphans resumed; %d waits for a worker; %s in all",
		len(results), kills1, cuts.Load(), phase1.Round(time.Millisecond), killCallers, k.kills-kills1, len(runs), orphaned,
		k.waits, time.Since(start).Round(time.Millisecond))
	if cuts.Load() < killCuts || k.kills < killWorkers {
		t.Errorf("%d run attempts cut by %d kills in %d runs, want at least %d by %d", cuts.Load(), k.kills, len(results), killCuts, killWorkers)
	}
	if orphaned == 0 {
		t.Errorf("no worker resumed an orphan after its callers died")
	}
	checkDurableRuns(t, results, runs)
	checkStoredRuns(t, ctx, st, runs, chargeLog, inDoubtReports.Load)
	stopReports()
	<-reportsDone
	reports.Close()
}

// killer keeps killAlive worker processes serving and kills them.
type killer struct {
	t     *testing.T
	env   []string
	pool  *worker.Pool
	procs map[string]*process // alive, by worker id
	all   []*process
	next  int
	kills int
	waits int
}

func (k *killer) spawn() {
	k.next++
	id := fmt.Sprint("w", k.next)
	p := startChild(k.t, id, k.env...)
	k.procs[id] = p
	k.all = append(k.all, p)
}

// ready lists the alive workers that serve (they log it once serving).
func (k *killer) ready() []string {
	var ids []string
	for id, p := range k.procs {
		if p.logLines(servingLogLine) > 0 {
			ids = append(ids, id)
		}
	}
	return ids
}

// serving lists the workers that answer, busiest first.
func (k *killer) serving(ctx context.Context) []worker.Info {
	infos, err := k.pool.Workers(ctx)
	if err != nil {
		return nil
	}
	out := infos[:0]
	for _, in := range infos {
		if k.procs[in.ID] != nil {
			out = append(out, in)
		}
	}
	slices.SortFunc(out, func(a, b worker.Info) int { return b.Running - a.Running })
	return out
}

// kill SIGKILLs worker id and starts its replacement.
func (k *killer) kill(id string) {
	p := k.procs[id]
	delete(k.procs, id)
	p.kill()
	k.kills++
	k.spawn()
}

// killOne kills a serving worker if another one serves (a kill with no
// other worker tests CapacityWait, not resuming); it waits at most 60s for
// that.
func (k *killer) killOne(ctx context.Context) {
	var ids []string
	if ids = k.ready(); len(ids) < 2 {
		k.waits++
		waitLong(k.t, fmt.Sprintf("2 workers serving (%d kills)", k.kills), func() bool {
			ids = k.ready()
			return len(ids) >= 2 || ctx.Err() != nil
		})
	}
	if ctx.Err() != nil {
		k.t.Fatalf("fewer than 2 workers serving when the test's time ran out (%d kills)", k.kills)
	}
	k.kill(ids[mrand.IntN(len(ids))])
}

// killCaller starts a caller process, and once its runs are going kills it
// and the two busiest workers at once.
func (k *killer) killCaller(ctx context.Context, n int) {
	c := startChild(k.t, fmt.Sprint("caller", n), append(slices.Clone(k.env), envDurableCaller+"=16")...)
	waitLong(k.t, "the caller's runs", func() bool { return c.logLines(callerRunning) > 0 })
	time.Sleep(time.Duration(mrand.IntN(100)) * time.Millisecond)
	infos := k.serving(ctx)
	c.kill()
	for _, in := range infos[:min(2, len(infos))] {
		k.kill(in.ID)
	}
	waitLong(k.t, "the replacement workers", func() bool { return len(k.ready()) >= killAlive })
}

// waitLong polls cond until it holds, for 60s at most: process starts on
// a loaded machine.
func waitLong(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testkit.WaitFor(t, 60*time.Second, what, cond)
}

// waitStoredRunsDone waits until every run in the store is done and
// returns their ids.
func waitStoredRunsDone(t *testing.T, ctx context.Context, st agent.Store, wait time.Duration) []string {
	t.Helper()
	ids, err := st.ListRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	open := ids
	var why []string
	t.Cleanup(func() {
		if len(open) > 0 {
			t.Logf("%d of %d stored runs not done: %s", len(open), len(ids), strings.Join(why[:min(5, len(why))], "; "))
		}
	})
	testkit.WaitFor(t, wait, "every stored run to be done", func() bool {
		var still []string
		why = why[:0]
		for _, id := range open {
			if cp, err := st.LoadCheckpoint(ctx, id); err != nil || cp.State != "done" {
				still = append(still, id)
				why = append(why, fmt.Sprintf("%s (%v, %v)", id, stateOf(cp), err))
			}
		}
		open = still
		return len(open) == 0
	})
	return ids
}

func stateOf(cp *agent.Checkpoint) string {
	if cp == nil {
		return "none"
	}
	return string(cp.State) + " owner " + cp.Owner
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

// checkDurableRuns checks the runs as their callers saw them: each ended
// with its answer, and its remote run is one of the stored runs (all done).
func checkDurableRuns(t *testing.T, results []*durableResult, stored []string) {
	t.Helper()
	done := map[string]bool{}
	for _, id := range stored {
		done[id] = true
	}
	lost, events := 0, 0
	for _, r := range results {
		events += len(r.inDoubt)
		switch {
		case r.err != nil || r.final.Type != agent.EventFinal:
			lost++
			t.Errorf("a run was lost: %v", r.err)
		case !done[r.remoteRun]:
			t.Errorf("run %s: answered, but not stored as done", r.remoteRun)
		}
	}
	// A report in the run's events can be lost with its process (events
	// leave through a buffer), and a run an orphan sweeper finished shows
	// its caller only its answer; the failure report goes out on the bus
	// before the in-doubt result is stored (checkStoredRuns counts those).
	t.Logf("%d runs lost; the callers saw %d in-doubt events", lost, events)
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

// checkStoredRuns checks every stored run (the callers' that died too):
// its session's history is valid, a charge with a result ran once, and
// every charge in doubt was reported.
func checkStoredRuns(t *testing.T, ctx context.Context, st agent.Store, runs []string, chargeLog string, reported func() int64) {
	t.Helper()
	out, err := os.ReadFile(chargeLog)
	if err != nil {
		t.Fatal(err)
	}
	charged := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if charged[line]++; charged[line] == 2 {
			t.Errorf("charge %q ran more than once", line)
		}
	}
	inDoubt := 0
	for _, id := range runs {
		cp, err := st.LoadCheckpoint(ctx, id)
		if err != nil {
			t.Errorf("run %s: %v", id, err)
			continue
		}
		// The session gets the run's messages just after its done
		// checkpoint.
		var sess *agent.SessionRecord
		testkit.WaitFor(t, 20*time.Second, "run "+id+"'s end in its session", func() bool {
			sess, err = st.LoadSession(ctx, cp.Session)
			return err != nil || sess.Run == ""
		})
		if err != nil || sess.Run != "" || len(sess.History) == 0 {
			t.Errorf("run %s: session %+v: %v", id, sess, err)
			continue
		}
		checkHistory(t, sess.History)
		for _, m := range sess.History {
			for _, res := range m.ToolResults {
				switch ran := charged[id+" "+res.CallID]; {
				case res.Name != "charge":
				case res.IsError:
					inDoubt++
				case ran != 1:
					t.Errorf("run %s call %s: result %q but ran %d times", id, res.CallID, res.Content, ran)
				}
			}
		}
	}
	// The reports are events on the bus: the last may still be in flight.
	testkit.WaitFor(t, 20*time.Second, fmt.Sprintf("a report of each of the %d in-doubt calls stored", inDoubt),
		func() bool { return reported() >= int64(inDoubt) })
	t.Logf("%d stored runs: %d charges ran, %d in doubt, %d reported", len(runs), len(charged), inDoubt, reported())
}
