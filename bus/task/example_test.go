package task_test

import (
	"context"
	"fmt"

	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/task"
)

// An A2A toolset publishes its remote tasks' updates through the bus; a
// console replays and follows one task until its final update.
func Example() {
	ctx := context.Background()
	b, err := bus.New(ctx, bus.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Close()
	for _, u := range []task.Update{
		{Task: "t1", Kind: "status", State: "working"},
		{Task: "t1", Kind: "status", State: "completed", Final: true},
	} {
		if err := b.PublishTask(ctx, u); err != nil {
			fmt.Println(err)
			return
		}
	}
	for u, err := range b.SubscribeTask(ctx, "t1") {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(u.Kind, u.State, u.Final)
	}
	// Output:
	// status working false
	// status completed true
}
