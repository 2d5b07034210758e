package agent_test

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
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// A durable run killed at each of its store writes (before the write
// lands, and just after) and then resumed by a fresh agent: no run is lost,
// no side-effecting call runs twice, every history is valid, and every
// call left in doubt is reported.
func TestDurableKillAtEveryWrite(t *testing.T) {
	ctx := testkit.Ctx(t, 60*time.Second)
	ks := &killStore{Store: agent.NewMemoryStore(agent.MemoryStoreOptions{}), cancel: func() {}}
	a := durableAgent(t, ks, fourTurns(), newLedger(), nil, agent.Durability{})
	if ans, err := a.Run(ctx, "go"); err != nil || ans.Text != "all done" {
		t.Fatalf("the unkilled run: %v, %+v", err, ans)
	}
	total := int(ks.writes.Load())
	// session create, checkpoint, 4 turns, 4 pay + 2 mail intents and
	// results, 2 result checkpoints (look, read-only: no call record),
	// done checkpoint, session append.
	if total != 2+4+6*2+2+2 {
		t.Fatalf("the run made %d store writes", total)
	}
	var doubted, restarted int
	for n := 1; n <= total; n++ {
		for _, before := range []bool{true, false} {
			t.Run(fmt.Sprintf("write%d/before=%v", n, before), func(t *testing.T) {
				d, r := killAndResume(t, ctx, n, before)
				doubted += d
				restarted += r
			})
		}
	}
	// Kills between an intent and its result leave calls in doubt; kills
	// before the first checkpoint leave no run to resume.
	if doubted == 0 || restarted == 0 {
		t.Fatalf("%d calls in doubt, %d runs restarted: the kills missed the windows they test", doubted, restarted)
	}
}

// killAndResume kills the run at write n and finishes it in a new agent.
// It returns the number of calls in doubt, and 1 if the run had not been
// accepted (its caller runs it again).
func killAndResume(t *testing.T, ctx context.Context, n int, before bool) (doubted, restarted int) {
	base := agent.NewMemoryStore(agent.MemoryStoreOptions{})
	l := newLedger()
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ks := &killStore{Store: base, n: n, before: before, cancel: cancel}
	s1 := durableAgent(t, ks, fourTurns(), l, nil, agent.Durability{}).NewSession()
	ans1, _ := s1.Run(rctx, "go")

	sink := &events{}
	a2 := durableAgent(t, base, fourTurns(), l, sink, agent.Durability{})
	var ans *agent.Answer
	var err error
	if _, lerr := base.LoadCheckpoint(ctx, ans1.Run); errors.Is(lerr, failure.NotFound) {
		restarted = 1
		s2, oerr := a2.OpenSession(ctx, s1.ID())
		if oerr != nil {
			t.Fatal(oerr)
		}
		ans, err = s2.Run(ctx, "go")
	} else {
		ans, err = a2.Resume(ctx, ans1.Run)
	}
	if err != nil || ans.Text != "all done" {
		t.Fatalf("after the kill: %v, %+v", err, ans)
	}
	rec, err := base.LoadSession(ctx, s1.ID())
	if err != nil {
		t.Fatal(err)
	}
	if rec.Run != "" {
		t.Fatalf("the session is still held by %s", rec.Run)
	}
	checkHistory(t, rec.History)
	users := 0
	for _, m := range rec.History {
		if m.Role == llm.RoleUser {
			users++
		}
	}
	if users != 1 {
		t.Fatalf("the session has %d user messages", users)
	}
	res := results(rec.History)
	for _, step := range fourTurns().steps {
		for _, c := range step {
			r, ok := res[c.ID]
			if !ok {
				t.Fatalf("call %s has no result", c.ID)
			}
			runs := l.count(ans.Run + "/" + c.ID)
			switch {
			case c.Name == "pay" && inDoubt(r):
				doubted++
				if runs > 1 {
					t.Fatalf("call %s in doubt ran %d times", c.ID, runs)
				}
			case c.Name == "pay":
				if runs != 1 || r.IsError {
					t.Fatalf("call %s ran %d times; result %q", c.ID, runs, r.Content)
				}
			default: // idempotent and read-only calls run again rather than stay in doubt
				if runs < 1 || r.IsError {
					t.Fatalf("call %s (%s) ran %d times; result %q", c.ID, c.Name, runs, r.Content)
				}
			}
		}
	}
	if got := len(sink.failures(failure.InDoubt)); got != doubted {
		t.Fatalf("%d calls in doubt, %d in_doubt events", doubted, got)
	}
	for key, runs := range l.runs {
		if l.tool[key] == "pay" && runs > 1 {
			t.Fatalf("pay ran %d times under key %s", runs, key)
		}
	}
	return doubted, restarted
}

// gatedModel waits for gate before each turn.
type gatedModel struct {
	llm.Model
	gate <-chan struct{}
}

func (g gatedModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	select {
	case <-g.gate:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.Model.Generate(ctx, req)
}

// Two replicas running one session at once: one proceeds, the other gets a
// Conflict, and the history does not interleave.
func TestDurableSessionRace(t *testing.T) {
	ctx := testkit.Ctx(t, 20*time.Second)
	st := agent.NewMemoryStore(agent.MemoryStoreOptions{})
	const replicas = 6
	start := make(chan struct{})
	// The runs overlap: a run that took the session waits in its first
	// model turn until the others have returned (or 5 s, if two took it),
	// so that none can start after the winner finished.
	gate := make(chan struct{})
	var returned atomic.Int32
	openGate := sync.OnceFunc(func() { close(gate) })
	defer time.AfterFunc(5*time.Second, openGate).Stop()
	var wg sync.WaitGroup
	errs := make([]error, replicas)
	answers := make([]*agent.Answer, replicas)
	for i := range replicas {
		a := durableAgent(t, st, gatedModel{Model: fourTurns(), gate: gate}, newLedger(), nil, agent.Durability{})
		s, err := a.OpenSession(ctx, "shared")
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			answers[i], errs[i] = s.Run(ctx, fmt.Sprint("input ", i))
			if returned.Add(1) == replicas-1 {
				openGate()
			}
		}()
	}
	close(start)
	wg.Wait()
	won := -1
	for i, err := range errs {
		switch {
		case err == nil:
			if won >= 0 {
				t.Fatalf("replicas %d and %d both ran the session", won, i)
			}
			won = i
		case !errors.Is(err, failure.Conflict):
			t.Fatalf("replica %d: %v, want a Conflict", i, err)
		}
	}
	if won < 0 {
		t.Fatal("no replica ran the session")
	}
	rec, err := st.LoadSession(ctx, "shared")
	if err != nil {
		t.Fatal(err)
	}
	checkHistory(t, rec.History)
	if rec.History[0].Text != fmt.Sprint("input ", won) || len(rec.History) != 1+4*2+1 {
		t.Fatalf("history of %d messages starting %q; the winner was %d", len(rec.History), rec.History[0].Text, won)
	}

	// Later runs on other replicas continue the same conversation, in order.
	for i := range 3 {
		a := durableAgent(t, st, &planModel{final: fmt.Sprint("answer ", i)}, newLedger(), nil, agent.Durability{})
		s, err := a.OpenSession(ctx, "shared")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Run(ctx, fmt.Sprint("more ", i)); err != nil {
			t.Fatal(err)
		}
	}
	rec, _ = st.LoadSession(ctx, "shared")
	tail := rec.History[len(rec.History)-6:]
	for i := range 3 {
		if tail[2*i].Text != fmt.Sprint("more ", i) || tail[2*i+1].Text != fmt.Sprint("answer ", i) {
			t.Fatalf("history tail %+v", tail)
		}
	}
}

// A run that holds its session (here: blocked in a tool) keeps other
// replicas' runs out with a Conflict that names it, until it ends.
func TestDurableSessionHeld(t *testing.T) {
	ctx := testkit.Ctx(t, 20*time.Second)
	st := agent.NewMemoryStore(agent.MemoryStoreOptions{})
	entered, release := make(chan struct{}), make(chan struct{})
	slow := agent.NewFuncTool(agent.ToolSpec{Name: "slow", Description: "waits", ReadOnly: true},
		func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
			close(entered)
			select {
			case <-release:
			case <-ctx.Done():
			}
			return agent.TextResult("slow done"), nil
		})
	a1, err := agent.New(ctx, agent.Config{Name: "durable", Tools: []agent.Tool{slow}, Permissions: agent.AllowAll(),
		Model: &planModel{final: "first", steps: [][]llm.ToolCall{{call("s1", "slow", 1)}}}, Durable: agent.Durable(st, 0)})
	if err != nil {
		t.Fatal(err)
	}
	s1, _ := a1.OpenSession(ctx, "held")
	done := make(chan error, 1)
	go func() { _, err := s1.Run(ctx, "first"); done <- err }()
	<-entered
	a2 := durableAgent(t, st, &planModel{final: "second"}, newLedger(), nil, agent.Durability{})
	s2, _ := a2.OpenSession(ctx, "held")
	_, err = s2.Run(ctx, "second")
	var fe *failure.Error
	if !errors.As(err, &fe) || fe.Kind != failure.Conflict || !strings.Contains(fe.Message, "held by run") {
		t.Fatalf("a run on a held session: %v", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if ans, err := s2.Run(ctx, "second"); err != nil || ans.Text != "second" {
		t.Fatalf("after the first run ended: %v %+v", err, ans)
	}
	if h := s2.History(); len(h) != 6 || h[0].Text != "first" || h[4].Text != "second" {
		t.Fatalf("history: %+v", h)
	}
}

// A run its caller stops (its context cancelled at each store write, the
// process alive) ends as it does without a store: a Canceled failure, every
// call answered, the session free for the next run; resuming it returns
// the same failure.
func TestDurableStopAtEveryWrite(t *testing.T) {
	ctx := testkit.Ctx(t, 60*time.Second)
	for n := 3; n <= 22; n++ {
		t.Run(fmt.Sprint("write", n), func(t *testing.T) {
			st := agent.NewMemoryStore(agent.MemoryStoreOptions{})
			rctx, cancel := context.WithCancel(ctx)
			defer cancel()
			l := newLedger()
			ks := &killStore{Store: st, n: n, stopOnly: true, cancel: cancel}
			a := durableAgent(t, ks, fourTurns(), l, nil, agent.Durability{})
			s := a.NewSession()
			ans, err := s.Run(rctx, "go")
			if err == nil {
				return // stopped after its last call: the answer came first
			}
			if !errors.Is(err, failure.Canceled) {
				t.Fatalf("a stopped run: %v", err)
			}
			rec, lerr := st.LoadSession(ctx, s.ID())
			if lerr != nil || rec.Run != "" {
				t.Fatalf("session after the stop: %+v %v", rec, lerr)
			}
			if len(rec.History) > 0 {
				checkHistory(t, rec.History)
			}
			if _, err := a.Resume(ctx, ans.Run); !errors.Is(err, failure.Canceled) {
				t.Fatalf("resume of a stopped run: %v", err)
			}
			for key, runs := range l.runs {
				if runs > 1 && l.tool[key] == "pay" {
					t.Fatalf("%s ran %d times", key, runs)
				}
			}
			if ans2, err := s.Run(ctx, "again"); err != nil || ans2.Text != "all done" {
				t.Fatalf("the next run: %v %+v", err, ans2)
			}
		})
	}
}

// pauseStore holds the first checkpoint creation of its first run until
// hold returns: the window between a run's claim of its session and its
// first checkpoint.
type pauseStore struct {
	agent.Store
	once sync.Once
	hold func()
}

func (p *pauseStore) SaveCheckpoint(ctx context.Context, cp *agent.Checkpoint, expect uint64) (uint64, error) {
	if expect == 0 {
		p.once.Do(p.hold)
	}
	return p.Store.SaveCheckpoint(ctx, cp, expect)
}

// TestSessionClaimWindow: a second run that finds the session held by a
// run with no checkpoint yet takes it, and the first run then stops with
// Conflict before it runs anything: never both.
func TestSessionClaimWindow(t *testing.T) {
	ctx := testkit.Ctx(t, 20*time.Second)
	base := agent.NewMemoryStore(agent.MemoryStoreOptions{})
	var second *agent.Answer
	var secondErr error
	l := newLedger()
	ps := &pauseStore{Store: base}
	ps.hold = func() {
		s, err := durableAgent(t, base, fourTurns(), l, nil, agent.Durability{}).OpenSession(ctx, "shared")
		if err != nil {
			t.Error(err)
			return
		}
		second, secondErr = s.Run(ctx, "second")
	}
	s, err := durableAgent(t, ps, fourTurns(), l, nil, agent.Durability{}).OpenSession(ctx, "shared")
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.Run(ctx, "first")
	if secondErr != nil || second == nil || second.Text != "all done" {
		t.Fatalf("the second run, in the first's window: %v, %+v", secondErr, second)
	}
	if !errors.Is(err, failure.Conflict) {
		t.Fatalf("the first run, after the second took its session: %v, want Conflict", err)
	}
	if first != nil && first.Turns > 0 {
		t.Fatalf("the first run ran %d turns", first.Turns)
	}
	l.mu.Lock()
	calls := 0
	for _, n := range l.runs {
		calls += n
	}
	l.mu.Unlock()
	if calls != 8 { // one run of fourTurns: 4 pay, 2 mail, 2 look
		t.Fatalf("%d tool calls ran, want the second run's 8", calls)
	}
	rec, err := base.LoadSession(ctx, "shared")
	if err != nil || rec.Run != "" {
		t.Fatalf("the session after both: %v, %+v", err, rec)
	}
	checkHistory(t, rec.History)
}
