// Command demo runs Switchboard's whole mission offline, on the embedded
// defaults: an embedded NATS bus, an MCP server (Go, in-process) with file
// tools, a skills folder, and a second agent served over A2A on a loopback
// port, driven by a deterministic scripted model unless a real one is asked
// for.
//
//	go run ./cmd/demo                    # offline, scripted model
//	go run ./cmd/demo -json              # the run's events as JSON lines
//	OPENAI_API_KEY=... go run ./cmd/demo -model env
//
// Flags: -mcp-config adds the servers of an .mcp.json; -skills adds a skills
// folder; -peer adds a remote A2A agent; -inject=false turns off the injected
// failure; -v prints the library's logs to stderr; -trace prints the run's
// OpenTelemetry span tree (or exports it to OTEL_EXPORTER_OTLP_ENDPOINT).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/switchboard-dev/switchboard/llm"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"
)

// options are the demo's flags.
type options struct {
	mcpConfig string
	skillsDir string
	peerURL   string
	model     string
	json      bool
	inject    bool
	verbose   bool
	trace     bool
	// step paces the demo's long-running tools.
	step time.Duration
	// interactive answers permission asks on the terminal.
	interactive bool
	color       bool
	// mainModel, if set, answers the main agent's turns (the demo's eval
	// records and replays them); the researcher peer keeps its own.
	mainModel llm.Model
}

func main() {
	if answerMain() {
		return
	}
	var o options
	flag.StringVar(&o.mcpConfig, "mcp-config", "", "an .mcp.json (mcpServers) whose servers are added to the demo's own")
	flag.StringVar(&o.skillsDir, "skills", "", "a skills folder, searched before the demo's built-in skill")
	flag.StringVar(&o.peerURL, "peer", "", "the base URL of a remote A2A agent to offer as a peer named \"remote\"")
	flag.StringVar(&o.model, "model", "scripted", `"scripted" (offline, deterministic), or "env": a real provider from OPENAI_API_KEY or ANTHROPIC_API_KEY`)
	flag.BoolVar(&o.json, "json", false, "print the run's events as JSON lines instead of the trace")
	flag.BoolVar(&o.inject, "inject", true, "inject one transient failure (the peer answers 503 once)")
	flag.BoolVar(&o.verbose, "v", false, "print the library's structured logs to stderr")
	flag.BoolVar(&o.trace, "trace", false, "trace the run with OpenTelemetry: print its span tree (the OTEL_* variables, when set, export traces and metrics instead)")
	flag.DurationVar(&o.step, "step", 150*time.Millisecond, "pace of the demo's long-running tools")
	flag.Parse()
	o.interactive = isatty.IsTerminal(os.Stdin.Fd()) && isatty.IsTerminal(os.Stdout.Fd())
	o.color = isatty.IsTerminal(os.Stdout.Fd()) && os.Getenv("NO_COLOR") == ""

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o, os.Stdout, os.Stdin, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		var exit exitError
		if errors.As(err, &exit) {
			os.Exit(int(exit))
		}
		os.Exit(1)
	}
}

// exitError carries an exit status.
type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// run is the demo; main only parses flags. stdin answers permission asks
// when o.interactive.
func run(ctx context.Context, o options, stdout io.Writer, stdin io.Reader, stderr io.Writer) (err error) {
	out := stdout
	if o.json {
		out = stderr // stdout is JSON lines
	}
	end, err := startTelemetry(ctx, out, o.trace)
	if err != nil {
		return err
	}
	defer func() {
		if eerr := end(); eerr != nil && err == nil {
			err = eerr
		}
	}()
	w, err := newWorld(ctx, o, stdout, stdin, stderr)
	if err != nil {
		return err
	}
	defer w.close()
	if err := w.runTask(ctx); err != nil {
		return err
	}
	return w.parkedStep(ctx)
}
