// Command pipeline runs a two-agent pipeline over A2A, offline: a planner
// agent delegates to a researcher agent served as an A2A peer on a local
// port. The researcher's progress streams into the planner's events (and
// onto the embedded NATS bus), and its question comes back to this
// terminal's answerer over the bus.
//
//	go run ./examples/pipeline "delegate research the A2A protocol"
//	go run ./examples/pipeline "delegate ask weather"
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/switchboard-dev/switchboard/agent"
)

func main() {
	input := "delegate research the A2A protocol"
	if len(os.Args) > 1 {
		input = strings.Join(os.Args[1:], " ")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	p, err := Start(ctx, Options{Answer: func(q string) string {
		fmt.Printf("? %s -> Paris\n", q)
		return "Paris"
	}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "pipeline:", err)
		os.Exit(1)
	}
	defer p.Close()
	fmt.Printf("researcher served at %s\n", p.URL)
	for ev, err := range p.Planner.Stream(ctx, input) {
		if err != nil {
			fmt.Fprintln(os.Stderr, "run failed:", err)
			os.Exit(1)
		}
		switch ev.Type {
		case agent.EventToolStarted:
			fmt.Printf("-> %s\n", ev.Call.Tool)
		case agent.EventToolProgress:
			fmt.Printf("   %s\n", ev.Progress.Message)
		case agent.EventFinal:
			fmt.Printf("= %s\n", ev.Text)
		}
	}
}
