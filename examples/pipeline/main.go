// Command pipeline reviews a change with a pipeline of four agents, offline:
// a planner, then two specialists in parallel (security, in this process;
// performance, served by a worker process over the NATS bus), whose
// findings a reviewer merges. It prints the run as a tree: every agent's
// events are nested under the step or tool call that started it.
//
//	go run ./examples/pipeline
//	go run ./examples/pipeline "Review PR 7: cache the session lookups"
//
// The worker process is this program started again with -worker: it joins
// the bus the pipeline's process listens on (loopback, token-protected) and
// serves the performance specialist in a queue group. Start more of them by
// hand (-worker URL, with SWITCHBOARD_TOKEN set) and they share the work.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/switchboard-dev/switchboard/agent/otelenv"
)

// defaultTask is what the pipeline reviews without arguments.
const defaultTask = "Review PR 42: add a result cache to the login handler"

func main() {
	workerURL := flag.String("worker", "", "serve the performance specialist on the bus at this NATS URL (token in $SWITCHBOARD_TOKEN)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer otelenv.Main(ctx, "example-pipeline", os.Stderr)() // the OTEL_* environment's traces and metrics (none when unset)
	if *workerURL != "" {
		if err := RunWorker(ctx, *workerURL, os.Getenv(TokenEnv), os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(1)
		}
		return
	}
	task := defaultTask
	if flag.NArg() > 0 {
		task = strings.Join(flag.Args(), " ")
	}
	p, err := Start(ctx, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "pipeline:", err)
		os.Exit(1)
	}
	defer p.Close()
	fmt.Printf("pipeline %q: planner → [security | performance (worker process %d)] → reviewer\n\n", p.Runner.Name(), p.WorkerPID)
	if err := Print(ctx, os.Stdout, p.Runner.Stream(ctx, task)); err != nil {
		fmt.Fprintln(os.Stderr, "run failed:", err)
		_ = p.Close()
		os.Exit(1)
	}
}
