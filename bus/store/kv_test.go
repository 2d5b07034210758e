package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/store"
	"github.com/switchboard-dev/switchboard/failure"
)

type kvTask struct {
	State   string   `json:"state"`
	History []string `json:"history,omitempty"`
}

func TestKV(t *testing.T) {
	b := newBus(t, bus.Config{})
	ctx := ctxT(t, 20*time.Second)
	kv, err := store.OpenKV[kvTask](ctx, b, store.KVConfig{Bucket: "tasks", History: 5})
	if err != nil {
		t.Fatal(err)
	}
	// Watch from the start, in the background.
	type seen struct {
		key, state string
		deleted    bool
	}
	watched := make(chan seen, 16)
	wctx, stopWatch := contextWithCancel(ctx)
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		for e, err := range kv.Watch(wctx, "task.*") {
			if err != nil {
				t.Error(err)
				return
			}
			watched <- seen{e.Key, e.Value.State, e.Deleted}
		}
	}()

	// The watcher starts asynchronously: wait until it sees a sentinel, so
	// that every write below is a live update.
	if _, err := kv.Put(ctx, "task.0", kvTask{State: "sentinel"}); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-watched:
		if got.key != "task.0" {
			t.Fatalf("first watched entry %+v, want the sentinel", got)
		}
	case <-ctx.Done():
		t.Fatal("the watcher never started")
	}

	rev1, err := kv.Create(ctx, "task.1", kvTask{State: "submitted"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = kv.Create(ctx, "task.1", kvTask{State: "again"})
	wantKind(t, err, failure.Conflict)
	if !errors.Is(err, failure.Conflict) {
		t.Errorf("create of an existing key: %v, want a Conflict failure", err)
	}
	e, err := kv.Get(ctx, "task.1")
	if err != nil || e.Value.State != "submitted" || e.Revision != rev1 || e.Key != "task.1" {
		t.Fatalf("Get = %+v, %v", e, err)
	}
	rev2, err := kv.Update(ctx, "task.1", kvTask{State: "working", History: []string{"submitted"}}, rev1)
	if err != nil || rev2 <= rev1 {
		t.Fatalf("Update = %d, %v", rev2, err)
	}
	// A stale revision is a typed conflict.
	_, err = kv.Update(ctx, "task.1", kvTask{State: "lost update"}, rev1)
	wantKind(t, err, failure.Conflict)
	if !errors.Is(err, failure.Conflict) {
		t.Errorf("stale update: %v, want a Conflict failure", err)
	}
	if _, err := kv.Put(ctx, "task.2", kvTask{State: "working"}); err != nil {
		t.Fatal(err)
	}
	keys, err := kv.Keys(ctx)
	slices.Sort(keys)
	if err != nil || !slices.Equal(keys, []string{"task.0", "task.1", "task.2"}) {
		t.Errorf("Keys = %v, %v", keys, err)
	}
	if err := kv.Delete(ctx, "task.2"); err != nil {
		t.Fatal(err)
	}
	_, err = kv.Get(ctx, "task.2")
	if !errors.Is(err, failure.NotFound) {
		t.Errorf("Get of a deleted key: %v, want a NotFound failure", err)
	}
	wantKind(t, err, failure.NotFound)
	_, err = kv.Get(ctx, "bad key with spaces")
	wantKind(t, err, failure.InvalidArgs)

	want := []seen{{"task.1", "submitted", false}, {"task.1", "working", false}, {"task.2", "working", false}, {"task.2", "", true}}
	for i, w := range want {
		select {
		case got := <-watched:
			if got != w {
				t.Errorf("watch %d = %+v, want %+v", i, got, w)
			}
		case <-ctx.Done():
			t.Fatalf("watch %d: timed out", i)
		}
	}
	stopWatch()
	<-watchDone

	// A value written by another program in another version is a Protocol failure.
	raw, err := b.JetStream().KeyValue(ctx, "tasks")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Put(ctx, "task.3", []byte(`{"v":7,"value":{}}`)); err != nil {
		t.Fatal(err)
	}
	_, err = kv.Get(ctx, "task.3")
	wantKind(t, err, failure.Protocol)

	keysNone, err := store.OpenKV[kvTask](ctx, b, store.KVConfig{Bucket: "empty", Memory: true})
	if err != nil {
		t.Fatal(err)
	}
	if k, err := keysNone.Keys(ctx); err != nil || len(k) != 0 {
		t.Errorf("Keys of an empty bucket = %v, %v", k, err)
	}
	if _, err := store.OpenKV[kvTask](ctx, b, store.KVConfig{}); !errorsIs(err, failure.Config) {
		t.Errorf("no bucket name: %v, want Config", err)
	}
}

// A typed KV bucket with revision-checked updates.
func ExampleOpenKV() {
	ctx := context.Background()
	b, _ := bus.New(ctx, bus.Config{})
	defer b.Close()

	type state struct{ Status string }
	kv, _ := store.OpenKV[state](ctx, b, store.KVConfig{Bucket: "tasks"})
	rev, _ := kv.Create(ctx, "task-1", state{"submitted"})
	_, err := kv.Update(ctx, "task-1", state{"working"}, rev)
	fmt.Println(err)
	_, err = kv.Update(ctx, "task-1", state{"lost"}, rev) // stale revision
	fmt.Println(err != nil)
	e, _ := kv.Get(ctx, "task-1")
	fmt.Println(e.Value.Status)
	// Output:
	// <nil>
	// true
	// working
}
