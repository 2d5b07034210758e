package bus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
)

func TestEventsReplayForLateSubscriber(t *testing.T) {
	b := newBus(t, bus.Config{})
	ctx := ctxT(t, 20*time.Second)
	run := "run_late"
	evs := []agent.Event{
		{Type: agent.EventRunStarted, Run: run, Seq: 1, Text: "hello"},
		{Type: agent.EventToolStarted, Run: run, Seq: 2, Call: &agent.CallInfo{ID: "c1", Tool: "search", Args: json.RawMessage(`{"q":"x"}`)}},
		{Type: agent.EventToolProgress, Run: run, Seq: 3, Call: &agent.CallInfo{ID: "c1", Tool: "search"}, Progress: &agent.Progress{Progress: 1, Total: 2, Message: "half"}},
		{Type: agent.EventToolFinished, Run: run, Seq: 4, Call: &agent.CallInfo{ID: "c1"}, Result: agent.TextResult("found")},
		{Type: agent.EventFinal, Run: run, Seq: 5, Text: "done"},
	}
	// Another run on the same bus must not leak into this one.
	b.Emit(ctx, agent.Event{Type: agent.EventRunStarted, Run: "run_other", Seq: 1})
	for _, ev := range evs {
		b.Emit(ctx, ev)
	}
	if err := b.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// The subscriber arrives after the run ended and still sees all of it.
	var got []agent.Event
	for ev, err := range b.Subscribe(ctx, run) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
	}
	if len(got) != len(evs) {
		t.Fatalf("replayed %d events, want %d: %+v", len(got), len(evs), got)
	}
	for i := range evs {
		if got[i].Type != evs[i].Type || got[i].Seq != evs[i].Seq || got[i].Run != run {
			t.Errorf("event %d = %s/%d/%s, want %s/%d", i, got[i].Type, got[i].Seq, got[i].Run, evs[i].Type, evs[i].Seq)
		}
	}
	if got[3].Result == nil || got[3].Result.Text() != "found" {
		t.Errorf("tool result not carried: %+v", got[3].Result)
	}
	// Replay ends when caught up.
	n := 0
	for _, err := range b.Replay(ctx, "run_other") {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 1 {
		t.Errorf("Replay(run_other) yielded %d events, want 1", n)
	}
	for range b.Replay(ctx, "run_never") {
		t.Error("Replay of an unknown run yielded an event")
	}
	// The progress event was mirrored onto the progress subject.
	sub, err := b.SubscribeProgress(ctx, run, bus.ProgressOptions{Replay: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	p, err := sub.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p.Call != "c1" || p.Progress != 1 || p.Total != 2 || p.Message != "half" {
		t.Errorf("mirrored progress = %+v", p)
	}
}

func TestEventsFollowLive(t *testing.T) {
	b := newBus(t, bus.Config{})
	ctx := ctxT(t, 20*time.Second)
	run := "run_live"
	b.Emit(ctx, agent.Event{Type: agent.EventRunStarted, Run: run, Seq: 1})
	if err := b.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	sub, err := b.SubscribeEvents(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for i := 2; i <= 4; i++ {
			b.Emit(ctx, agent.Event{Type: agent.EventTurnStarted, Run: run, Seq: i, Turn: i})
		}
		b.Emit(ctx, agent.Event{Type: agent.EventFinal, Run: run, Seq: 5})
	}()
	var seqs []int
	for ev, err := range sub.All(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, ev.Seq)
		if ev.Type == agent.EventFinal {
			break
		}
	}
	if fmt.Sprint(seqs) != "[1 2 3 4 5]" {
		t.Errorf("followed seqs %v, want [1 2 3 4 5]", seqs)
	}
}

// slowPolicy counts handled failures.
type countingPolicy struct {
	failure.Policy
	mu   sync.Mutex
	msgs []string
}

func (p *countingPolicy) Handle(ctx context.Context, err error) failure.Outcome {
	p.mu.Lock()
	p.msgs = append(p.msgs, err.Error())
	p.mu.Unlock()
	return p.Policy.Handle(ctx, err)
}

func (p *countingPolicy) messages() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.msgs...)
}

// blockingPolicy blocks Handle until released, the first time only.
type blockingPolicy struct {
	countingPolicy
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (p *blockingPolicy) Handle(ctx context.Context, err error) failure.Outcome {
	p.once.Do(func() {
		close(p.entered)
		<-p.release
	})
	return p.countingPolicy.Handle(ctx, err)
}

func TestEmitNeverBlocksAndReportsDrops(t *testing.T) {
	pol := &blockingPolicy{countingPolicy: countingPolicy{Policy: failure.NewPolicy(failure.PolicyConfig{})},
		entered: make(chan struct{}), release: make(chan struct{})}
	b := newBus(t, bus.Config{EventBuffer: 1, Policy: pol, Stream: bus.StreamConfig{Memory: true}})
	ctx := ctxT(t, 20*time.Second)
	// An event over the server's max payload cannot be published: the
	// failure goes to the policy, which here stalls the publisher.
	b.Emit(ctx, agent.Event{Type: agent.EventModelText, Run: "run_flood", Seq: 1, Text: strings.Repeat("x", 2<<20)})
	<-pol.entered
	// With the publisher stalled, Emit still returns at once: one event
	// fits the buffer, the other nine are dropped.
	for i := 2; i <= 11; i++ {
		b.Emit(ctx, agent.Event{Type: agent.EventModelText, Run: "run_flood", Seq: i, Text: "t"})
	}
	close(pol.release)
	if err := b.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	msgs := strings.Join(pol.messages(), "\n")
	if !strings.Contains(msgs, "an event could not be published") {
		t.Errorf("the failed publish was not reported: %s", msgs)
	}
	if !strings.Contains(msgs, "9 events were dropped") {
		t.Errorf("the drops were not reported: %s", msgs)
	}
	// The one buffered event was published. Flush means the server has
	// received it; the stream stores it a moment later.
	var seqs []int
	testkit.WaitFor(t, 10*time.Second, "the buffered event in the stream", func() bool {
		seqs = seqs[:0]
		for ev, err := range b.Replay(ctx, "run_flood") {
			if err != nil {
				t.Fatal(err)
			}
			seqs = append(seqs, ev.Seq)
		}
		return len(seqs) > 0
	})
	if fmt.Sprint(seqs) != "[2]" {
		t.Errorf("published seqs %v, want [2]", seqs)
	}
}
