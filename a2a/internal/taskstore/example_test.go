package taskstore_test

import (
	"context"
	"fmt"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/switchboard-dev/switchboard/a2a/internal/taskstore"
	"github.com/switchboard-dev/switchboard/bus"
)

// Replicas of an A2A server share tasks through a JetStream key-value
// bucket: each opens the same bucket and passes the store (and, for push
// notifications, taskstore.NewPushConfigs over another bucket) in
// a2a.ServerConfig.Store. A task written by one replica is read by another.
func ExampleNewKV() {
	ctx := context.Background()
	b, err := bus.New(ctx, bus.Config{}) // in production: URLs of the NATS cluster
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Close()
	kv, err := b.JetStream().CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "a2a-tasks"})
	if err != nil {
		fmt.Println(err)
		return
	}
	owner := func(context.Context) string { return "alice" }
	replicaA, _ := taskstore.NewKV(taskstore.KVConfig{KV: kv, Owner: owner, TTL: 7 * 24 * time.Hour})
	replicaB, _ := taskstore.NewKV(taskstore.KVConfig{KV: kv, Owner: owner, TTL: 7 * 24 * time.Hour})

	now := time.Now()
	task := &a2ago.Task{ID: "task-1", ContextID: "ctx-1", Status: a2ago.TaskStatus{State: a2ago.TaskStateWorking, Timestamp: &now}}
	if _, err := replicaA.Create(ctx, task); err != nil {
		fmt.Println(err)
		return
	}
	got, err := replicaB.Get(ctx, "task-1")
	fmt.Println(got.Task.ID, got.Task.Status.State, err)
	// Output: task-1 TASK_STATE_WORKING <nil>
}

// The in-memory store is the server's default: it shares immutable task
// data between writes instead of deep-copying every event.
func ExampleNewMemory() {
	ctx := context.Background()
	m := taskstore.NewMemory(taskstore.MemoryConfig{Owner: func(context.Context) string { return "alice" }})
	now := time.Now()
	if _, err := m.Create(ctx, &a2ago.Task{ID: "t", ContextID: "c", Status: a2ago.TaskStatus{State: a2ago.TaskStateSubmitted, Timestamp: &now}}); err != nil {
		fmt.Println(err)
		return
	}
	got, err := m.Get(ctx, "t")
	fmt.Println(got.Task.Status.State, err)
	// Output: TASK_STATE_SUBMITTED <nil>
}
