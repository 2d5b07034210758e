package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/worker"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// gatedStore holds the sweeper in the scan that resumes a parked run: the
// second read of an expired question (the first scan to see it expired
// only notes the run's revision; the second takes the run) signals reached
// and waits for release. It counts the scans (run listings).
type gatedStore struct {
	agent.Store
	expired          atomic.Int32
	lists            atomic.Int64
	reached, release chan struct{}
}

func (g *gatedStore) LoadQuestion(ctx context.Context, id string) (*agent.Question, error) {
	q, err := g.Store.LoadQuestion(ctx, id)
	if err == nil && q.Answer == nil && time.Now().After(q.Deadline) && g.expired.Add(1) == 2 {
		close(g.reached)
		select {
		case <-g.release:
		case <-ctx.Done():
		}
	}
	return q, err
}

func (g *gatedStore) ListRuns(ctx context.Context) ([]string, error) {
	g.lists.Add(1)
	return g.Store.ListRuns(ctx)
}

// capacityAgent is the durable agent of TestSweepRespectsCapacity: "order"
// calls charge (asked for, parking at once; its answer waits for answer),
// "hold" calls hold, which returns once release closes.
func capacityAgent(t *testing.T, st agent.Store, charged *atomic.Int32, answer, release <-chan struct{}) *agent.Agent {
	t.Helper()
	wait := func(c <-chan struct{}) {
		select {
		case <-c:
		case <-time.After(20 * time.Second):
		}
	}
	model := llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
		in := lastUser(req)
		if res := testkit.LastToolResults(req); len(res) > 0 {
			if strings.HasPrefix(in, "order") {
				wait(answer)
			}
			return llm.Say("done: " + firstN(body(res[0].Content), 60))
		}
		tool, _, _ := strings.Cut(in, " ")
		if tool == "order" {
			tool = "charge"
		}
		return llm.Calls(llm.CallTool("c1", tool, map[string]string{"input": in}))
	}))
	charge := agent.NewFuncTool(agent.ToolSpec{Name: "charge", Description: "Charges a card."},
		func(context.Context, json.RawMessage) (*agent.Result, error) {
			charged.Add(1)
			return agent.TextResult("charged"), nil
		})
	hold := agent.NewFuncTool(agent.ToolSpec{Name: "hold", Description: "Holds the worker's slot."},
		func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
			select {
			case <-release:
				return agent.TextResult("held"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	a, err := agent.New(context.Background(), agent.Config{Name: "billing", Model: model, Tools: []agent.Tool{charge, hold},
		Permissions: &agent.Permissions{Rules: []agent.Rule{{Tool: "charge", Permission: agent.Ask}, {Tool: "hold", Permission: agent.Allow}}},
		Durable:     agent.Durability{Sessions: st, Runs: st, Inbox: st, ParkAfter: -1, QuestionTTL: 300 * time.Millisecond}, Policy: fastPolicy()})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestSweepRespectsCapacity: a job the worker takes while a scan reads the
// store fills the worker (MaxConcurrent 1); the scan then finds a parked
// run whose question expired, and leaves it: the worker never runs more
// than MaxConcurrent. Once the job has ended a later scan resumes the run
// to its end.
func TestSweepRespectsCapacity(t *testing.T) {
	host := newBus(t, bus.Config{})
	st := &gatedStore{Store: agent.NewMemoryStore(agent.MemoryStoreOptions{}), reached: make(chan struct{}), release: make(chan struct{})}
	answer, holdRelease := make(chan struct{}), make(chan struct{})
	var charged atomic.Int32
	a := capacityAgent(t, st, &charged, answer, holdRelease)
	srv := serve(t, host, a, worker.ServeConfig{MaxConcurrent: 1, OrphanAfter: 200 * time.Millisecond, OrphanScan: 50 * time.Millisecond})
	releaseScan := sync.OnceFunc(func() { close(st.release) })
	releaseHold := sync.OnceFunc(func() { close(holdRelease) })
	releaseAnswer := sync.OnceFunc(func() { close(answer) })
	t.Cleanup(func() { releaseScan(); releaseHold(); releaseAnswer() }) // before the worker's Close
	pool := newPool(t, host, "billing", worker.PoolConfig{})
	ctx := ctxT(t, 30*time.Second)

	evs, err := events(pool.Stream(ctx, "order 1"))
	if !errors.Is(err, failure.Parked) || len(evs) == 0 {
		t.Fatalf("the run did not park: %s, %v", types(evs), err)
	}
	run := evs[len(evs)-1].Run
	select {
	case <-st.reached:
	case <-time.After(10 * time.Second):
		t.Fatal("no scan came to take the parked run")
	}
	// The scan is past its room check, reading the store: a job comes.
	held := make(chan error, 1)
	go func() {
		_, err := agent.Run(ctx, pool, "hold 1")
		held <- err
	}()
	waitFor(t, "the job to run", func() bool { return srv.Stats().Running == 1 && srv.Stats().Accepted == 2 })
	lists := st.lists.Load()
	releaseScan()
	waitFor(t, "the next scan", func() bool { return st.lists.Load() > lists })
	if s := srv.Stats(); s.Running != 1 || s.Orphans != 0 {
		t.Fatalf("with the job running: %d runs, %d orphans resumed; want 1 run (MaxConcurrent), none resumed", s.Running, s.Orphans)
	}
	releaseHold()
	if err := <-held; err != nil {
		t.Fatalf("the job: %v", err)
	}
	waitFor(t, "a later scan to resume the parked run", func() bool { return srv.Stats().Orphans == 1 })
	releaseAnswer()
	cp := waitCheckpoint(t, st, run, agent.RunDone)
	if res := storedResult(t, st, cp); !res.IsError || !strings.Contains(res.Content, "before") {
		t.Errorf("the expired call's result: %+v", res)
	}
	if n := charged.Load(); n != 0 {
		t.Errorf("the charge nobody approved ran %d times", n)
	}
}
