package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// Orphan test timings: a run unlisted and unchanged for 400ms is an
// orphan; workers scan every ~150ms.
const (
	testOrphanAfter = 400 * time.Millisecond
	testOrphanScan  = 150 * time.Millisecond
)

// ledger is the charge tool of the orphan tests, shared by the nodes of a
// test: it counts each real execution per run and call, and can hold a
// call (gate) until the test opens it.
type ledger struct {
	mu      sync.Mutex
	charged map[string]int
	// gate, while open is false, holds each charge after it is counted
	// (the charge has happened; its result has not been returned).
	gate    chan struct{}
	started chan string // "<node> <run>" of each charge that waits at the gate
	// modelGate, when set, holds the model's turn after a tool result;
	// answers counts those turns.
	modelGate chan struct{}
	answers   atomic.Int32
}

func newLedger(hold bool) *ledger {
	l := &ledger{charged: map[string]int{}, started: make(chan string, 16)}
	if hold {
		l.gate = make(chan struct{})
	}
	return l
}

func (l *ledger) count(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.charged[key]
}

// tool is the charge tool of node.
func (l *ledger) tool(node string) agent.Tool {
	return agent.NewFuncTool(agent.ToolSpec{Name: "charge", Description: "Charges a card (not idempotent)."},
		func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
			c, _ := agent.CallFromContext(ctx)
			l.mu.Lock()
			l.charged[c.Run+" "+c.ID]++
			l.mu.Unlock()
			if l.gate != nil {
				l.started <- node + " " + c.Run
				select {
				case <-l.gate:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return agent.TextResult("charged"), nil
		})
}

// model calls charge once, then answers with its result.
func (l *ledger) model() llm.Model {
	return llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
		if res := testkit.LastToolResults(req); len(res) > 0 {
			l.answers.Add(1)
			if l.modelGate != nil {
				<-l.modelGate
			}
			return llm.Say("done: " + firstN(body(res[0].Content), 60))
		}
		return llm.Calls(llm.CallTool("c1", "charge", map[string]string{"input": lastUser(req)}))
	}))
}

// node is one durable worker process, in this process: its own
// connection to the host server (its store goes through it), so that
// closing the connection is the process dying, as far as the others see.
type node struct {
	b   *bus.Bus
	st  agent.Store
	cs  *countingStore // st as the worker sees it: its scans are counted
	srv *worker.Server
}

func startNode(t *testing.T, host *bus.Bus, id string, l *ledger, d agent.Durability, cfg worker.ServeConfig) *node {
	t.Helper()
	ctx := ctxT(t, 30*time.Second)
	b, err := bus.New(ctx, bus.Config{URLs: []string{host.ClientURL()}, Name: id, Policy: fastPolicy()})
	if err != nil {
		t.Fatal(err)
	}
	n := &node{b: b}
	if n.st, err = store.OpenAgent(ctx, b, store.AgentConfig{}); err != nil {
		t.Fatal(err)
	}
	n.cs = &countingStore{Store: n.st}
	d.Sessions, d.Runs, d.Inbox = n.cs, n.cs, n.cs
	perms := agent.AllowAll()
	if d.ParkAfter != 0 {
		perms = &agent.Permissions{Rules: []agent.Rule{{Tool: "charge", Permission: agent.Ask}}}
	}
	a, err := agent.New(ctx, agent.Config{Name: "billing", Model: l.model(), Tools: []agent.Tool{l.tool(id)},
		Permissions: perms, Durable: d, Policy: fastPolicy()})
	if err != nil {
		t.Fatal(err)
	}
	cfg.ID = id
	if cfg.OrphanAfter == 0 {
		cfg.OrphanAfter, cfg.OrphanScan = testOrphanAfter, testOrphanScan
	}
	if n.srv, err = worker.Serve(context.Background(), b, a, cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = n.srv.Close() // a killed node's runs fail their writes; that is the point
		_ = n.b.Close()
	})
	return n
}

// kill cuts the node off: its heartbeats, events and store writes stop.
func (n *node) kill() { n.b.Conn().Close() }

func orphans(nodes ...*node) int64 {
	var sum int64
	for _, n := range nodes {
		sum += n.srv.Stats().Orphans
	}
	return sum
}

// waitCheckpoint waits until run's checkpoint is in state (20s at most).
func waitCheckpoint(t *testing.T, st agent.Store, run string, state agent.RunState) *agent.Checkpoint {
	t.Helper()
	ctx := ctxT(t, 30*time.Second)
	var cp *agent.Checkpoint
	var err error
	t.Cleanup(func() {
		if t.Failed() && (err != nil || cp == nil || cp.State != state) {
			t.Logf("run %s: last checkpoint read %+v, %v", run, cp, err)
		}
	})
	testkit.WaitFor(t, 20*time.Second, fmt.Sprintf("run %s's checkpoint in state %s", run, state), func() bool {
		cp, err = st.LoadCheckpoint(ctx, run)
		return err == nil && cp.State == state
	})
	return cp
}

// storedResult is the stored result of the run's call c1, and the
// session's history checked (every call has exactly one result).
func storedResult(t *testing.T, st agent.Store, cp *agent.Checkpoint) llm.ToolResult {
	t.Helper()
	// The session gets the run's messages just after its done checkpoint.
	ctx := ctxT(t, 10*time.Second)
	var sess *agent.SessionRecord
	waitFor(t, "the run's end in its session", func() bool {
		var err error
		sess, err = st.LoadSession(ctx, cp.Session)
		return err == nil && sess.Run == "" && len(sess.History) > 0
	})
	checkHistory(t, sess.History)
	for _, m := range sess.History {
		for _, r := range m.ToolResults {
			if r.CallID == "c1" {
				return r
			}
		}
	}
	t.Fatalf("the session has no result for c1: %+v", sess.History)
	return llm.ToolResult{}
}

// TestOrphanedRuns: a worker serving a durable agent resumes the runs of
// a worker that died together with its caller, and only those: a run in a
// long tool call on a live worker is not taken, whether its caller lives
// or died (the run then goes on without it).
func TestOrphanedRuns(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		killWorker, killCaller   bool
		wantOrphans              int64
		wantInDoubt, wantCharged bool
	}{
		// The charge was in flight when its worker died: in doubt, not
		// run again.
		{name: "worker and caller die", killWorker: true, killCaller: true, wantOrphans: 1, wantInDoubt: true},
		{name: "caller dies", killCaller: true, wantCharged: true},
		{name: "long call", wantCharged: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			host := newBus(t, bus.Config{Listen: "127.0.0.1:0", StoreDir: t.TempDir()})
			l := newLedger(true)
			nodes := map[string]*node{
				"a": startNode(t, host, "a", l, agent.Durability{}, worker.ServeConfig{}),
				"b": startNode(t, host, "b", l, agent.Durability{}, worker.ServeConfig{}),
			}
			caller := newBus(t, bus.Config{URLs: []string{host.ClientURL()}, Name: "caller"})
			pool := newPool(t, caller, "billing", worker.PoolConfig{})
			done, where, run := streamOrder(ctxT(t, 30*time.Second), t, pool, l)
			if tc.killWorker {
				nodes[where].kill()
			}
			if tc.killCaller {
				caller.Conn().Close()
			}
			// Long enough for the other worker to judge the run an orphan
			// several times over, were it one: four orphan timeouts, and
			// its scans counted (a loaded machine's scans come late).
			other := nodes[map[string]string{"a": "b", "b": "a"}[where]]
			scans, t0 := other.cs.lists.Load(), time.Now()
			testkit.WaitFor(t, 30*time.Second, "the other worker's scans over four orphan timeouts", func() bool {
				return time.Since(t0) >= 4*testOrphanAfter && other.cs.lists.Load() >= scans+4
			})
			close(l.gate)
			cp := waitCheckpoint(t, other.st, run, agent.RunDone)
			if got := orphans(nodes["a"], nodes["b"]); got != tc.wantOrphans {
				t.Errorf("%d orphans resumed, want %d", got, tc.wantOrphans)
			}
			if n := l.count(run + " c1"); n != 1 {
				t.Errorf("the charge ran %d times, want 1", n)
			}
			res := storedResult(t, other.st, cp)
			if res.IsError != tc.wantInDoubt || (tc.wantCharged && !strings.Contains(res.Content, "charged")) {
				t.Errorf("stored result %+v; want in doubt %v, charged %v", res, tc.wantInDoubt, tc.wantCharged)
			}
			if cp.Answer == nil || !strings.Contains(cp.Answer.Text, "done: ") {
				t.Errorf("stored answer %+v", cp.Answer)
			}
			if !tc.killCaller {
				o := <-done
				if o.err != nil || len(o.evs) == 0 || o.evs[len(o.evs)-1].Type != agent.EventFinal {
					t.Errorf("the caller's stream: %s, %v", types(o.evs), o.err)
				}
			} else {
				<-done
			}
		})
	}
}

// streamed is the outcome of a caller's stream.
type streamed struct {
	evs []agent.Event
	err error
}

// streamOrder streams "order 1" through pool in the background and waits
// (at most 10 s) for its charge to start at the ledger's gate; it returns
// the stream's outcome to come, and the node and run the charge started
// on.
func streamOrder(ctx context.Context, t *testing.T, pool *worker.Pool, l *ledger) (done <-chan streamed, where, run string) {
	t.Helper()
	ch := make(chan streamed, 1)
	go func() {
		evs, err := events(pool.Stream(ctx, "order 1"))
		ch <- streamed{evs, err}
	}()
	select {
	case s := <-l.started:
		_, _ = fmt.Sscan(s, &where, &run)
	case <-time.After(10 * time.Second):
		t.Fatal("no charge started")
	}
	return ch, where, run
}

// TestParkedQuestionExpires: a parked run whose question passes its
// deadline is resumed by a worker without anyone calling Resume: the call
// gets its Timeout, the model goes on, the run ends done. Of two workers
// sweeping, one resumes it.
func TestParkedQuestionExpires(t *testing.T) {
	host := newBus(t, bus.Config{Listen: "127.0.0.1:0", StoreDir: t.TempDir()})
	l := newLedger(false)
	d := agent.Durability{ParkAfter: -1, QuestionTTL: 300 * time.Millisecond}
	a := startNode(t, host, "a", l, d, worker.ServeConfig{})
	b := startNode(t, host, "b", l, d, worker.ServeConfig{})
	pool := newPool(t, host, "billing", worker.PoolConfig{})
	ctx := ctxT(t, 30*time.Second)
	evs, err := events(pool.Stream(ctx, "order 1"))
	if !errors.Is(err, failure.Parked) || len(evs) == 0 {
		t.Fatalf("the run did not park: %s, %v", types(evs), err)
	}
	run := evs[len(evs)-1].Run
	qs, err := a.st.PendingQuestions(ctx)
	if err != nil || len(qs) != 1 {
		t.Fatalf("pending questions %+v, %v", qs, err)
	}
	cp := waitCheckpoint(t, a.st, run, agent.RunDone)
	res := storedResult(t, a.st, cp)
	if !res.IsError || !strings.Contains(res.Content, "before") {
		t.Errorf("the expired call's result: %+v", res)
	}
	if cp.Answer == nil || !strings.Contains(cp.Answer.Text, "done: ") {
		t.Errorf("stored answer %+v", cp.Answer)
	}
	if n := l.count(run + " c1"); n != 0 {
		t.Errorf("the charge nobody approved ran %d times", n)
	}
	if got := orphans(a, b); got != 1 {
		t.Errorf("%d resumes of the parked run, want 1", got)
	}
}

// TestPoolResumeFollowsSweeper: the worker dies, a sweeper resumes the run
// before the caller's pool notices; the pool's retry finds the run taken by
// a live worker, follows it instead of taking it over, and the caller's
// stream ends with the run's answer. The charge runs once.
func TestPoolResumeFollowsSweeper(t *testing.T) {
	host := newBus(t, bus.Config{Listen: "127.0.0.1:0", StoreDir: t.TempDir()})
	l := newLedger(true)
	l.modelGate = make(chan struct{})
	nodes := map[string]*node{
		"a": startNode(t, host, "a", l, agent.Durability{}, worker.ServeConfig{}),
		"b": startNode(t, host, "b", l, agent.Durability{}, worker.ServeConfig{}),
	}
	// The pool notices a lost worker after 2.4s; a sweeper after ~0.5s.
	pool := newPool(t, host, "billing", worker.PoolConfig{Heartbeat: 400 * time.Millisecond, MissedHeartbeats: 6})
	done, where, run := streamOrder(ctxT(t, 30*time.Second), t, pool, l)
	other := nodes[map[string]string{"a": "b", "b": "a"}[where]]
	accepted := other.srv.Stats().Accepted
	// The worker dies with the charge in flight; only then may the charge
	// return (on a dead worker, whose writes fail). Opened before the kill,
	// the gate let a slow machine record the charge's result and ask the
	// model before the worker died: the charge was not in doubt then.
	nodes[where].kill()
	close(l.gate)
	waitFor(t, "the sweeper to take the run", func() bool { return other.srv.Stats().Orphans == 1 })
	waitFor(t, "the pool's retry", func() bool { return other.srv.Stats().Accepted > accepted })
	time.Sleep(2 * testOrphanAfter) // the retry follows, and must not take the run over
	close(l.modelGate)
	o := <-done
	if o.err != nil || len(o.evs) == 0 || o.evs[len(o.evs)-1].Type != agent.EventFinal ||
		!strings.Contains(o.evs[len(o.evs)-1].Text, "done: ") {
		t.Fatalf("the caller's stream: %s, %v", types(o.evs), o.err)
	}
	cp := waitCheckpoint(t, other.st, run, agent.RunDone)
	if res := storedResult(t, other.st, cp); !res.IsError {
		t.Errorf("the charge in flight when its worker died: %+v, want in doubt", res)
	}
	if n := l.count(run + " c1"); n != 1 {
		t.Errorf("the charge ran %d times, want 1", n)
	}
	if got := orphans(nodes["a"], nodes["b"]); got != 1 {
		t.Errorf("%d orphan resumes, want 1", got)
	}
	if n := l.answers.Load(); n != 1 {
		t.Errorf("the model was asked for the answer %d times, want 1 (the retry took the run over)", n)
	}
}

// TestCloseHandsDurableRunBack: a worker that stops mid-run gives a
// durable run back without recording it failed; the pool's retry resumes
// it on another worker to its answer.
func TestCloseHandsDurableRunBack(t *testing.T) {
	host := newBus(t, bus.Config{Listen: "127.0.0.1:0", StoreDir: t.TempDir()})
	l := newLedger(true)
	var closed atomic.Bool
	nodes := map[string]*node{
		"a": startNode(t, host, "a", l, agent.Durability{}, worker.ServeConfig{}),
		"b": startNode(t, host, "b", l, agent.Durability{}, worker.ServeConfig{}),
	}
	pool := newPool(t, host, "billing", worker.PoolConfig{})
	done, where, run := streamOrder(ctxT(t, 30*time.Second), t, pool, l)
	go func() { _ = nodes[where].srv.Close(); closed.Store(true) }()
	waitFor(t, "the worker to stop", closed.Load)
	close(l.gate)
	if o := <-done; o.err != nil || o.evs[len(o.evs)-1].Type != agent.EventFinal {
		t.Fatalf("the caller's stream: %s, %v", types(o.evs), o.err)
	}
	other := nodes[map[string]string{"a": "b", "b": "a"}[where]]
	cp := waitCheckpoint(t, other.st, run, agent.RunDone)
	if res := storedResult(t, other.st, cp); !res.IsError {
		t.Errorf("the charge cut by the stop: %+v, want in doubt", res)
	}
	if n := l.count(run + " c1"); n != 1 {
		t.Errorf("the charge ran %d times, want 1", n)
	}
}

// countingStore counts the checkpoint reads and run listings of a store.
type countingStore struct {
	agent.Store
	loads, lists atomic.Int64
}

func (c *countingStore) LoadCheckpoint(ctx context.Context, run string) (*agent.Checkpoint, error) {
	c.loads.Add(1)
	return c.Store.LoadCheckpoint(ctx, run)
}

func (c *countingStore) ListRuns(ctx context.Context) ([]string, error) {
	c.lists.Add(1)
	return c.Store.ListRuns(ctx)
}

// TestSweepReadsFinishedRunsOnce: a worker's scans read each finished
// run's checkpoint once; later scans only list the runs.
func TestSweepReadsFinishedRunsOnce(t *testing.T) {
	const runs, orphanAfter = 20, 200 * time.Millisecond
	host := newBus(t, bus.Config{})
	st := &countingStore{Store: agent.NewMemoryStore(agent.MemoryStoreOptions{})}
	l := newLedger(false)
	a, err := agent.New(context.Background(), agent.Config{Name: "billing", Model: l.model(), Tools: []agent.Tool{l.tool("a")},
		Permissions: agent.AllowAll(), Durable: agent.Durable(st, 0), Policy: fastPolicy()})
	if err != nil {
		t.Fatal(err)
	}
	serve(t, host, a, worker.ServeConfig{OrphanAfter: orphanAfter, OrphanScan: 50 * time.Millisecond})
	pool := newPool(t, host, "billing", worker.PoolConfig{})
	ctx := ctxT(t, 20*time.Second)
	for i := range runs {
		if _, err := agent.Run(ctx, pool, fmt.Sprint("order ", i)); err != nil {
			t.Fatal(err)
		}
	}
	// Wait for the scans to have read them all, and for a quiet spell:
	// twice OrphanAfter (the time the heartbeats still list a run after it
	// ended: the scans skip it until then, a loaded machine's last runs
	// are read later) and two scans without a read; then for ten more
	// scans.
	waitFor(t, "a scan of the finished runs", func() bool { return st.loads.Load() >= runs })
	var loads, lists int64
	var from time.Time
	mark := func() { loads, lists, from = st.loads.Load(), st.lists.Load(), time.Now() }
	mark()
	testkit.WaitFor(t, 20*time.Second, "a quiet spell without checkpoint reads", func() bool {
		if st.loads.Load() != loads { // a read: the spell starts over
			mark()
			return false
		}
		// At lists+2 the scan that started at lists+1 has ended.
		return st.lists.Load() >= lists+2 && time.Since(from) >= 2*orphanAfter
	})
	loads, lists = st.loads.Load(), st.lists.Load()
	waitFor(t, "ten more scans", func() bool { return st.lists.Load() >= lists+10 })
	if more := st.loads.Load() - loads; more != 0 {
		t.Errorf("%d checkpoint reads in ten scans of %d finished runs, want 0", more, runs)
	}
}

// TestOrphanThatCannotResume: a run whose resume fails at once (its
// session is gone) is tried three times by a worker, then left to a
// supervisor: the scans do not take it over forever.
func TestOrphanThatCannotResume(t *testing.T) {
	host := newBus(t, bus.Config{})
	st := &countingStore{Store: agent.NewMemoryStore(agent.MemoryStoreOptions{})}
	l := newLedger(false)
	a, err := agent.New(context.Background(), agent.Config{Name: "billing", Model: l.model(), Tools: []agent.Tool{l.tool("a")},
		Permissions: agent.AllowAll(), Durable: agent.Durable(st, 0), Policy: fastPolicy()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t, 20*time.Second)
	now := time.Now()
	cp := &agent.Checkpoint{V: 1, Run: "run_broken", Session: "ses_gone", Agent: "billing", Owner: "worker:billing:ghost:own_1",
		State: "running", Input: "x", Messages: []llm.Message{{Role: llm.RoleUser, Text: "x"}}, Started: now, Updated: now}
	if _, err := st.SaveCheckpoint(ctx, cp, 0); err != nil {
		t.Fatal(err)
	}
	srv := serve(t, host, a, worker.ServeConfig{OrphanAfter: 150 * time.Millisecond, OrphanScan: 50 * time.Millisecond})
	rev := func() uint64 {
		c, err := st.LoadCheckpoint(ctx, "run_broken")
		if err != nil {
			t.Fatal(err)
		}
		return c.Revision
	}
	waitFor(t, "three takeovers", func() bool { return rev() >= 4 })
	// Thirty scans, 50 ms apart: ten orphan timeouts in which no scan may
	// take the run over again (counted, not slept: a loaded machine's
	// scans come later).
	lists := st.lists.Load()
	testkit.WaitFor(t, 30*time.Second, "thirty more scans", func() bool { return st.lists.Load() >= lists+30 })
	if got := rev(); got != 4 {
		t.Errorf("checkpoint revision %d, want 4 (the first write and three takeovers)", got)
	}
	if n := srv.Stats().Orphans; n != 0 {
		t.Errorf("%d orphans resumed, want 0", n)
	}
}

// TestFinishedRunEndRecorded: a run whose process died between its done
// checkpoint and its session's update (and whose caller died too) has its
// end recorded in the session by a worker: the session is free again, with
// the run's messages.
func TestFinishedRunEndRecorded(t *testing.T) {
	host := newBus(t, bus.Config{})
	st := agent.NewMemoryStore(agent.MemoryStoreOptions{})
	l := newLedger(false)
	a, err := agent.New(context.Background(), agent.Config{Name: "billing", Model: l.model(), Tools: []agent.Tool{l.tool("a")},
		Permissions: agent.AllowAll(), Durable: agent.Durable(st, 0), Policy: fastPolicy()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t, 20*time.Second)
	rev, err := st.PutSession(ctx, &agent.SessionRecord{V: 1, ID: "ses_1", Run: "run_done"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	msgs := []llm.Message{{Role: llm.RoleUser, Text: "x"}, {Role: llm.RoleAssistant, Text: "done: ok"}}
	if _, err := st.SaveCheckpoint(ctx, &agent.Checkpoint{V: 1, Run: "run_done", Session: "ses_1", SessionRevision: rev, Agent: "billing",
		Owner: "worker:billing:ghost:own_1", State: "done", Input: "x", Messages: msgs, Turn: 1,
		Answer: &agent.Answer{Text: "done: ok", Turns: 1}, Started: now, Updated: now}, 0); err != nil {
		t.Fatal(err)
	}
	srv := serve(t, host, a, worker.ServeConfig{OrphanAfter: 150 * time.Millisecond, OrphanScan: 50 * time.Millisecond})
	waitFor(t, "the run's end in its session", func() bool {
		rec, err := st.LoadSession(ctx, "ses_1")
		return err == nil && rec.Run == "" && len(rec.History) == 2 && rec.History[1].Text == "done: ok"
	})
	if n := srv.Stats().Orphans; n != 1 {
		t.Errorf("%d orphans resumed, want 1", n)
	}
}
