package taskstore_test

import (
	"context"
	"fmt"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/switchboard-dev/switchboard/a2a/internal/taskstore"
)

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
