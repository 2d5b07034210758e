package worker_test

import (
	"context"
	"fmt"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/worker"
	"github.com/switchboard-dev/switchboard/llm"
)

// A worker serves an agent on the bus, and a pool runs inputs on it: the
// pool is an agent.Runner, so agent.Run (or a workflow, or AsTool) uses it
// like a local agent. Here both ends share one embedded bus; in production
// they are separate processes pointed at the same NATS servers, and every
// worker process added shares the load.
func Example() {
	ctx := context.Background()
	b, err := bus.New(ctx, bus.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Close()

	// The worker side.
	summarizer, _ := agent.New(ctx, agent.Config{Name: "summarize", Model: llm.NewCyclic(llm.Say("A short summary.")),
		Elicitor: worker.Elicitor(nil)})
	srv, err := worker.Serve(ctx, b, summarizer, worker.ServeConfig{MaxConcurrent: 4})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()

	// The caller's side.
	pool, _ := worker.NewPool(b, "summarize", worker.PoolConfig{})
	ans, err := agent.Run(ctx, pool, "Summarise notes.txt")
	fmt.Println(ans.Text, err)
	// Output: A short summary. <nil>
}
