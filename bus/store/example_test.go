package store_test

import (
	"context"
	"fmt"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/store"
)

// Replicas of an agent share its tools' vectors through an object store:
// what one saved (the search saves what it embedded), another loads,
// without calling the embedder (in an agent: agent.Config{Embedder: e,
// Vectors: vs}).
func ExampleOpenVectors() {
	ctx := context.Background()
	b, err := bus.New(ctx, bus.Config{}) // in production: URLs of the NATS cluster
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Close()
	replicaA, err := store.OpenVectors(ctx, b, store.VectorsConfig{})
	if err != nil {
		fmt.Println(err)
		return
	}
	replicaB, _ := store.OpenVectors(ctx, b, store.VectorsConfig{})
	key := agent.VectorKey{0x2a}
	if err := replicaA.SaveVectors(ctx, []agent.VectorKey{key}, [][]float32{{0.6, 0.8}}); err != nil {
		fmt.Println(err)
		return
	}
	got, err := replicaB.LoadVectors(ctx, []agent.VectorKey{key, {0x2b}})
	fmt.Println(got, err)
	// Output: [[0.6 0.8] []] <nil>
}

// Replicas of an A2A server share tasks through a JetStream key-value
// bucket: each opens the same bucket and passes the stores in
// a2a.ServerConfig (Store, and PushStore for push notifications). A task
// written by one replica is read by another.
func ExampleOpenTasks() {
	ctx := context.Background()
	b, err := bus.New(ctx, bus.Config{}) // in production: URLs of the NATS cluster
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Close()
	owner := func(context.Context) string { return "alice" }
	replicaA, err := store.OpenTasks(ctx, b, store.TasksConfig{Owner: owner, TTL: 7 * 24 * time.Hour})
	if err != nil {
		fmt.Println(err)
		return
	}
	replicaB, _ := store.OpenTasks(ctx, b, store.TasksConfig{Owner: owner, TTL: 7 * 24 * time.Hour})

	now := time.Now()
	task := &a2ago.Task{ID: "task-1", ContextID: "ctx-1", Status: a2ago.TaskStatus{State: a2ago.TaskStateWorking, Timestamp: &now}}
	if _, err := replicaA.Store.Create(ctx, task); err != nil {
		fmt.Println(err)
		return
	}
	got, err := replicaB.Store.Get(ctx, "task-1")
	fmt.Println(got.Task.ID, got.Task.Status.State, err)
	// Output: task-1 TASK_STATE_WORKING <nil>
}
