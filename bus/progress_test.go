package bus_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/task"
	"github.com/switchboard-dev/switchboard/failure"
)

func TestProgressRoundTrip(t *testing.T) {
	b := newBus(t, bus.Config{})
	ctx := ctxT(t, 20*time.Second)
	live, err := b.SubscribeProgress(ctx, "run_p", bus.ProgressOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	all, err := b.SubscribeProgress(ctx, "", bus.ProgressOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	sent := []bus.ProgressUpdate{
		{Run: "run_p", Token: "tok-1", Progress: 1, Total: 3, Message: "one"},
		{Run: "run_p", Call: "c9", Progress: 2, Total: 3},
		{Run: "run_p", Token: "tok-1", Progress: 3, Total: 3, Message: "done"},
	}
	if err := bus.PublishProgress(ctx, b, bus.ProgressUpdate{Run: "run_q", Progress: 0.5}); err != nil {
		t.Fatal(err)
	}
	pub := bus.ProgressPublisher(b, "run_p")
	for i, p := range sent {
		publish := func(ctx context.Context, p bus.ProgressUpdate) error { return bus.PublishProgress(ctx, b, p) }
		if i%2 == 1 {
			publish = pub
		}
		if err := publish(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range sent {
		got, err := live.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("live %d = %+v, want %+v", i, got, want)
		}
	}
	// The wildcard subscription sees the other run too, first.
	first, err := all.Next(ctx)
	if err != nil || first.Run != "run_q" {
		t.Errorf("wildcard first = %+v, %v", first, err)
	}
	// A late subscriber replays from the stream.
	replay, err := b.SubscribeProgress(ctx, "run_p", bus.ProgressOptions{Replay: true})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for p, err := range replay.All(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if p != sent[n] {
			t.Errorf("replayed %d = %+v", n, p)
		}
		if n++; n == len(sent) {
			break
		}
	}
	// A malformed payload on the subject is a Protocol error; the
	// subscription goes on.
	b.Conn().Publish(bus.SubjectsOf(b).Progress("run_p"), []byte(`{"v":2}`))
	bus.PublishProgress(ctx, b, bus.ProgressUpdate{Run: "run_p", Progress: 4})
	if _, err := live.Next(ctx); !errorsIs(err, failure.Protocol) {
		t.Errorf("malformed: %v, want Protocol", err)
	}
	if p, err := live.Next(ctx); err != nil || p.Progress != 4 {
		t.Errorf("after malformed: %+v, %v", p, err)
	}
}

func TestTaskUpdatesRoundTrip(t *testing.T) {
	b := newBus(t, bus.Config{})
	ctx := ctxT(t, 20*time.Second)
	updates := []task.Update{
		{Task: "task-1", Context: "ctx-1", Kind: "status", State: "working"},
		{Task: "task-1", Kind: "artifact", Data: json.RawMessage(`{"artifactId":"a1","parts":[{"text":"hi"}]}`)},
		{Task: "task-1", Kind: "status", State: "input-required", Message: "which file?"},
		{Task: "task-1", Kind: "status", State: "completed", Final: true},
	}
	// Two published before the subscriber, two after.
	for _, u := range updates[:2] {
		if err := b.PublishTask(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.PublishTask(ctx, task.Update{Task: "task-2", State: "working"}); err != nil {
		t.Fatal(err)
	}
	done := make(chan []task.Update)
	go func() {
		var got []task.Update
		for u, err := range b.SubscribeTask(ctx, "task-1") {
			if err != nil {
				t.Error(err)
				break
			}
			got = append(got, u)
		}
		done <- got
	}()
	for _, u := range updates[2:] {
		if err := b.PublishTask(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	got := <-done
	if len(got) != len(updates) {
		t.Fatalf("got %d updates, want %d: %+v", len(got), len(updates), got)
	}
	for i, u := range got {
		w := updates[i]
		if u.Task != w.Task || u.Kind != w.Kind || u.State != w.State || u.Final != w.Final || string(u.Data) != string(w.Data) || u.Time.IsZero() {
			t.Errorf("update %d = %+v, want %+v", i, u, w)
		}
	}
	if err := b.PublishTask(ctx, task.Update{}); !errorsIs(err, failure.InvalidArgs) {
		t.Errorf("empty task id: %v, want InvalidArgs", err)
	}
}
