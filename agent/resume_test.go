package agent_test

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
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// killedRun runs fourTurns until its store write n, then returns the store
// and the run's id, as a crashed process leaves them.
func killedRun(t *testing.T, ctx context.Context, n int, l *ledger) (agent.Store, string) {
	t.Helper()
	base := agent.NewMemoryStore(agent.MemoryStoreOptions{})
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ks := &killStore{Store: base, n: n, cancel: cancel}
	ans, _ := durableAgent(t, ks, fourTurns(), l, nil, agent.Durability{}).Run(rctx, "go")
	return base, ans.Run
}

// Replicas resuming one run at once: one continues it; the others get a
// Conflict (or, arriving after it finished, its answer); no call repeats.
// A finished run resumed again returns its answer again.
func TestResumeRace(t *testing.T) {
	ctx := testkit.Ctx(t, 20*time.Second)
	l := newLedger()
	st, run := killedRun(t, ctx, 9, l)
	const replicas = 5
	var wg sync.WaitGroup
	errs := make([]error, replicas)
	answers := make([]*agent.Answer, replicas)
	start := make(chan struct{})
	for i := range replicas {
		a := durableAgent(t, st, fourTurns(), l, nil, agent.Durability{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			answers[i], errs[i] = a.Resume(ctx, run)
		}()
	}
	close(start)
	wg.Wait()
	ok := 0
	for i, err := range errs {
		switch {
		case err == nil:
			if answers[i].Text != "all done" {
				t.Fatalf("replica %d: %+v", i, answers[i])
			}
			ok++
		case !errors.Is(err, failure.Conflict):
			t.Fatalf("replica %d: %v", i, err)
		}
	}
	if ok < 1 {
		t.Fatalf("no replica finished the run: %v", errs)
	}
	for key, n := range l.runs {
		if l.tool[key] == "pay" && n > 1 {
			t.Fatalf("%s ran %d times", key, n)
		}
	}
	again, err := durableAgent(t, st, fourTurns(), l, nil, agent.Durability{}).Resume(ctx, run)
	if err != nil || again.Text != "all done" || again.Run != run || again.ToolCalls != 8 {
		t.Fatalf("a finished run resumed: %v %+v", err, again)
	}
}

// A process that is still running a run another process resumed stops at
// its next checkpoint with a Conflict; the history is the resumer's alone.
func TestResumeTakesOver(t *testing.T) {
	ctx := testkit.Ctx(t, 20*time.Second)
	st := agent.NewMemoryStore(agent.MemoryStoreOptions{})
	var entered atomic.Int32
	release := make(chan struct{})
	inFirst := make(chan struct{})
	slow := agent.NewFuncTool(agent.ToolSpec{Name: "slow", Description: "waits the first time", ReadOnly: true},
		func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
			if entered.Add(1) == 1 {
				close(inFirst)
				select {
				case <-release:
				case <-ctx.Done():
				}
				return agent.TextResult("old process"), nil
			}
			return agent.TextResult("new process"), nil
		})
	mk := func() *agent.Agent {
		a, err := agent.New(ctx, agent.Config{Name: "takeover", Tools: []agent.Tool{slow}, Permissions: agent.AllowAll(),
			Model:   &planModel{final: "over", steps: [][]llm.ToolCall{{call("w1", "slow", 1)}, {call("w2", "slow", 2)}}},
			Durable: agent.Durable(st, 0)})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	s := mk().NewSession()
	type out struct {
		ans *agent.Answer
		err error
	}
	old := make(chan out, 1)
	go func() { ans, err := s.Run(ctx, "go"); old <- out{ans, err} }()
	<-inFirst
	runs, _ := st.ListRuns(ctx)
	if len(runs) != 1 {
		t.Fatalf("runs: %v", runs)
	}
	ans, err := mk().Resume(ctx, runs[0])
	if err != nil || ans.Text != "over" {
		t.Fatalf("the resume: %v %+v", err, ans)
	}
	close(release)
	o := <-old
	if !errors.Is(o.err, failure.Conflict) {
		t.Fatalf("the old process: %v, want a Conflict", o.err)
	}
	rec, _ := st.LoadSession(ctx, s.ID())
	checkHistory(t, rec.History)
	for _, r := range results(rec.History) {
		if r.Content == "" || strings.Contains(r.Content, "old process") {
			t.Fatalf("the old process's result reached the history: %q", r.Content)
		}
	}
	if len(rec.History) != 6 || rec.Run != "" {
		t.Fatalf("history of %d messages, held by %q", len(rec.History), rec.Run)
	}
}
