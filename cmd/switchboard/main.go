// Command switchboard is Switchboard's command line. `switchboard eval`
// runs eval sets against a model and compares their reports
// (docs/evals.md); `switchboard mcp serve` is an MCP gateway: it aggregates the servers of
// an .mcp.json, skills folders and A2A peers into one MCP endpoint (stdio,
// or Streamable HTTP with --listen), under the same mcp__<server>__<tool>
// names an agent sees, with the permission policy applied to listing and
// calling, OAuth 2.1 bearer tokens, per-client rate limits and an audit
// stream on JetStream. See docs/gateway.md. `switchboard dev` serves the
// web developer console (docs/console.md) on the agent of a file, or on the
// runs of an existing NATS deployment.
//
//	go install github.com/switchboard-dev/switchboard/cmd/switchboard@latest
//	switchboard mcp serve --mcp-config .mcp.json --skills .claude/skills --listen 127.0.0.1:8080
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `usage: switchboard mcp serve [flags]
       switchboard eval run|compare ...
       switchboard dev -config agent.json | -watch [flags]

Serves the servers of an .mcp.json, skills folders and A2A peers as one MCP
server, over stdio (default) or Streamable HTTP (--listen). Run
'switchboard mcp serve -h' for the flags; docs/gateway.md explains them.
`

func main() {
	tuneGC(os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, errUsage) {
			fmt.Fprintln(os.Stderr, "switchboard:", err)
		}
		os.Exit(2)
	}
}

// errUsage is a command line that was refused (usage already printed).
var errUsage = errors.New("usage")

// run dispatches the command line.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "dev" {
		return runDev(ctx, args[1:], stderr)
	}
	if len(args) > 0 && args[0] == "eval" {
		return runEval(ctx, args[1:], stdout, stderr)
	}
	if len(args) < 2 || args[0] != "mcp" || args[1] != "serve" {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	opts, err := parseServe(args[2:], stderr)
	if err != nil {
		return err
	}
	return serve(ctx, opts, stdin, stdout, stderr)
}
