package agent_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
)

// tenCalls is the benchmark's plan: ten turns of one side-effecting call
// each (so every call writes an intent and a result), then the answer.
func tenCalls() *planModel {
	m := &planModel{final: "ten done"}
	for i := range 10 {
		m.steps = append(m.steps, []llm.ToolCall{call(fmt.Sprint("b", i), "pay", i)})
	}
	return m
}

// BenchmarkDurableRun measures a durable 10-call scripted run (memory
// store) against the same run without a store, alternating in one
// benchmark so both run under the same conditions; "ratio" is durable /
// memory.
func BenchmarkDurableRun(b *testing.B) {
	ctx := context.Background()
	st := agent.NewMemoryStore(agent.MemoryStoreOptions{})
	t := &testing.T{}
	mem := durableAgent(t, nil, tenCalls(), newLedger(), nil, agent.Durability{})
	dur := durableAgent(t, st, tenCalls(), newLedger(), nil, agent.Durability{})
	var memT, durT time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		if ans, err := mem.Run(ctx, "go"); err != nil || ans.ToolCalls != 10 {
			b.Fatal(err, ans)
		}
		t1 := time.Now()
		s := dur.NewSession()
		ans, err := s.Run(ctx, "go")
		if err != nil || ans.ToolCalls != 10 {
			b.Fatal(err, ans)
		}
		t2 := time.Now()
		memT += t1.Sub(t0)
		durT += t2.Sub(t1)
		_ = st.DeleteSession(ctx, s.ID())
		_ = st.DeleteRun(ctx, ans.Run)
	}
	n := float64(b.N)
	b.ReportMetric(float64(memT.Nanoseconds())/n, "memory-ns/run")
	b.ReportMetric(float64(durT.Nanoseconds())/n, "durable-ns/run")
	b.ReportMetric(float64(durT)/float64(memT), "ratio")
}

// The benchmark's durable run does what it says: ten calls, each with an
// intent and a result, a checkpoint per turn, and the session's claim and
// end.
func TestDurableRunWrites(t *testing.T) {
	ctx := context.Background()
	ks := &killStore{Store: agent.NewMemoryStore(agent.MemoryStoreOptions{}), cancel: func() {}}
	l := newLedger()
	ans, err := durableAgent(t, ks, tenCalls(), l, nil, agent.Durability{}).Run(ctx, "go")
	if err != nil || ans.ToolCalls != 10 || ans.Turns != 11 {
		t.Fatalf("%v %+v", err, ans)
	}
	for i := range 10 {
		if n := l.count(fmt.Sprintf("%s/b%d", ans.Run, i)); n != 1 {
			t.Fatalf("call b%d ran %d times", i, n)
		}
	}
	// claim + first checkpoint, 10 turn checkpoints, 10 intents, 10
	// results, done checkpoint + session append.
	if got := ks.writes.Load(); got != 2+10+10+10+2 {
		t.Fatalf("%d store writes", got)
	}
}
