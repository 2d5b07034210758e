package agent_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/agenttest"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *fakeClock { return &fakeClock{now: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(_ *testing.T, d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestMemoryStoreConformance(t *testing.T) {
	clk := newClock()
	agenttest.RunStoreSuite(t, agenttest.Harness[agent.Store]{
		New:     func(*testing.T) agent.Store { return agent.NewMemoryStore(agent.MemoryStoreOptions{Now: clk.Now}) },
		Now:     clk.Now,
		Advance: clk.Advance,
	})
}

// The memory store's retention: limits on the records kept, and expiry of
// runs and sessions by the store's defaults.
func TestMemoryStoreRetention(t *testing.T) {
	ctx := testkit.Ctx(t, 10*time.Second)
	clk := newClock()
	s := agent.NewMemoryStore(agent.MemoryStoreOptions{Now: clk.Now, MaxSessions: 2, MaxRuns: 2, MaxQuestions: 1,
		MaxCallsPerRun: 1, MaxRecordBytes: 400, SessionTTL: time.Minute, RunTTL: time.Hour, FinishedTTL: time.Minute})
	wantKind := func(what string, err error, k failure.Kind) {
		t.Helper()
		var fe *failure.Error
		if !errors.As(err, &fe) || fe.Kind != k {
			t.Fatalf("%s: %v, want kind %s", what, err, k)
		}
	}
	for _, id := range []string{"a", "b"} {
		if _, err := s.PutSession(ctx, &agent.SessionRecord{ID: id}, 0); err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.PutSession(ctx, &agent.SessionRecord{ID: "c"}, 0)
	wantKind("a session over MaxSessions", err, failure.Budget)
	big := make([]string, 40)
	for i := range big {
		big[i] = fmt.Sprint("grant-pattern-", i)
	}
	_, err = s.AppendSession(ctx, &agent.SessionRecord{ID: "a", Grants: big}, 1)
	wantKind("a session over MaxRecordBytes", err, failure.Budget)
	if got, _ := s.LoadSession(ctx, "a"); got == nil || got.Revision != 1 || len(got.Grants) != 0 {
		t.Fatalf("a refused append changed the session: %+v", got)
	}
	clk.Advance(t, 2*time.Minute) // the sessions expire: their room is free again
	if _, err := s.PutSession(ctx, &agent.SessionRecord{ID: "c"}, 0); err != nil {
		t.Fatalf("a session after the others expired: %v", err)
	}

	if _, err := s.SaveCheckpoint(ctx, &agent.Checkpoint{Run: "done", State: "done"}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SaveCheckpoint(ctx, &agent.Checkpoint{Run: "live", State: "running"}, 0); err != nil {
		t.Fatal(err)
	}
	_, err = s.SaveCheckpoint(ctx, &agent.Checkpoint{Run: "third", State: "running"}, 0)
	wantKind("a run over MaxRuns", err, failure.Budget)
	if err := s.PutIntent(ctx, &agent.CallRecord{Run: "live", Call: "c1"}); err != nil {
		t.Fatal(err)
	}
	wantKind("a call over MaxCallsPerRun", s.PutIntent(ctx, &agent.CallRecord{Run: "live", Call: "c2"}), failure.Budget)
	clk.Advance(t, 2*time.Minute) // a finished run lives FinishedTTL, a live one RunTTL
	if _, err := s.LoadCheckpoint(ctx, "done"); !errors.Is(err, failure.NotFound) {
		t.Fatalf("a finished run after FinishedTTL: %v", err)
	}
	if _, err := s.LoadCheckpoint(ctx, "live"); err != nil {
		t.Fatalf("a live run before RunTTL: %v", err)
	}
	clk.Advance(t, time.Hour)
	if ids, _ := s.ListRuns(ctx); len(ids) != 0 {
		t.Fatalf("runs after RunTTL: %v", ids)
	}
	if _, err := s.SaveCheckpoint(ctx, &agent.Checkpoint{Run: "live", State: "running"}, 0); err != nil {
		t.Fatalf("a run id reused after expiry: %v", err)
	}
	if calls, _ := s.LoadCalls(ctx, "live"); len(calls) != 0 {
		t.Fatalf("an expired run's calls came back: %+v", calls)
	}

	q := &agent.Question{ID: "q1", Deadline: clk.Now().Add(time.Minute)}
	if err := s.PutQuestion(ctx, q); err != nil {
		t.Fatal(err)
	}
	wantKind("a question over MaxQuestions", s.PutQuestion(ctx, &agent.Question{ID: "q2", Deadline: q.Deadline}), failure.Budget)
}
