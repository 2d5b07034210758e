// Command responders runs the bus's responders (sampling and elicitation)
// in a separate process from the agent, over a NATS URL, the way a
// production deployment puts a person's console or an LLM gateway on
// another machine.
//
//	go run ./examples/responders                       # both sides, two processes
//	go run ./examples/responders -serve -url nats://…  # only the responder side
//
// Without -serve the program starts an embedded NATS server that listens on
// a loopback port, starts itself again with -serve pointed at that URL (the
// responder process), and runs an agent whose permission asks and whose MCP
// sampling requests travel over NATS to that other process.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/otelenv"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/llm"
)

func main() {
	serve := flag.Bool("serve", false, "run only the responders, connected to -url")
	url := flag.String("url", "", "NATS URL of the bus (with -serve)")
	token := flag.String("token", os.Getenv("SWITCHBOARD_NATS_TOKEN"), "NATS token")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	defer otelenv.Main(ctx, "example-responders", os.Stderr)() // the OTEL_* environment's traces and metrics (none when unset)
	var err error
	if *serve {
		err = serveResponders(ctx, *url, *token, os.Stdout)
	} else {
		err = runAgent(ctx, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// serveResponders answers sampling with a (scripted) model and approves
// permission asks for read-only-looking tools, declining the rest, until
// ctx ends.
func serveResponders(ctx context.Context, url, token string, out io.Writer) error {
	if url == "" {
		return errors.New("-serve needs -url")
	}
	b, err := bus.New(ctx, bus.Config{URLs: []string{url}, Token: token, Name: "responders"})
	if err != nil {
		return err
	}
	defer b.Close()
	sampler, err := bus.NewModelSampler(bus.ModelSamplerConfig{
		Model:  llm.NewCyclic(llm.Say("A haiku from the responder process: quiet bus at night / messages cross the queue group / answers find their way")),
		Policy: agent.Allow, MaxTokens: 256})
	if err != nil {
		return err
	}
	s1, err := b.ServeSampling(ctx, sampler, bus.ServeOptions{})
	if err != nil {
		return err
	}
	defer s1.Close()
	s2, err := b.ServeElicitation(ctx, agent.ElicitorFunc(func(_ context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
		if e.Kind == agent.ElicitPermission && strings.HasPrefix(e.Tool, "publish") {
			fmt.Fprintf(out, "responder (pid %d): approving %s\n", os.Getpid(), e.Tool)
			return agent.ElicitationResult{Action: agent.ElicitAccept}, nil
		}
		fmt.Fprintf(out, "responder (pid %d): declining %s %s\n", os.Getpid(), e.Kind, e.Tool)
		return agent.ElicitationResult{Action: agent.ElicitDecline, Reason: "only publish_* tools are approved here"}, nil
	}), bus.ServeOptions{})
	if err != nil {
		return err
	}
	defer s2.Close()
	fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := b.Flush(fctx); err != nil {
		return err
	}
	fmt.Fprintln(out, "responders ready")
	<-ctx.Done()
	return nil
}

// runAgent starts the bus listening on loopback, the responder process,
// and an agent that needs both responders.
func runAgent(ctx context.Context, out io.Writer) error {
	const token = "example-token"
	b, err := bus.New(ctx, bus.Config{Listen: "127.0.0.1:0", Token: token})
	if err != nil {
		return err
	}
	defer b.Close()
	fmt.Fprintf(out, "bus listening at %s\n", b.ClientURL())

	self, err := os.Executable()
	if err != nil {
		return err
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	child := exec.CommandContext(cctx, self, "-serve", "-url", b.ClientURL(), "-token", token)
	child.Stdout, child.Stderr = out, os.Stderr
	child.Cancel = func() error { return child.Process.Signal(os.Interrupt) }
	child.WaitDelay = 5 * time.Second
	if err := child.Start(); err != nil {
		return err
	}
	defer func() { cancel(); _ = child.Wait() }()
	if err := waitForResponders(ctx, b); err != nil {
		return err
	}

	a, err := newAgent(ctx, b, llm.NewScripted(script()...))
	if err != nil {
		return err
	}
	ans, err := a.Run(ctx, task)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "agent (pid %d) answered:\n%s\n", os.Getpid(), ans.Text)
	return nil
}

// task is what the example asks of its agent.
const task = "Write a poem, publish it, and clean up old posts."

// script is the scripted model's turns: call the three tools, then answer.
func script() []llm.Step {
	return []llm.Step{
		llm.Calls(llm.CallTool("1", "write_poem", nil), llm.CallTool("2", "publish_post", nil), llm.CallTool("3", "delete_posts", nil)),
		llm.SummarizeResults("Done"),
	}
}

// newAgent is the agent around model: a tool that samples the host's
// model over b, and two tools whose permission is asked over b.
func newAgent(ctx context.Context, b *bus.Bus, model llm.Model) (*agent.Agent, error) {
	sampler := b.Sampler()
	poem := agent.NewFuncTool(agent.ToolSpec{Name: "write_poem", Description: "Writes a poem with the host's model.",
		InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
		res, err := sampler.Sample(ctx, agent.SamplingRequest{Messages: []llm.Message{{Role: llm.RoleUser, Text: "A haiku about NATS"}}, MaxTokens: 100})
		if err != nil {
			return nil, err
		}
		return agent.TextResult(res.Text), nil
	})
	publish := agent.NewFuncTool(agent.ToolSpec{Name: "publish_post", Description: "Publishes a post.", Destructive: true,
		InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, json.RawMessage) (*agent.Result, error) {
		return agent.TextResult("published"), nil
	})
	deleteAll := agent.NewFuncTool(agent.ToolSpec{Name: "delete_posts", Description: "Deletes every post.", Destructive: true,
		InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, json.RawMessage) (*agent.Result, error) {
		return agent.TextResult("deleted"), nil
	})
	return agent.New(ctx, agent.Config{Model: model, Tools: []agent.Tool{poem, publish, deleteAll},
		Permissions: &agent.Permissions{Rules: []agent.Rule{{Tool: "write_poem", Permission: agent.Allow}}},
		Elicitor:    b.Elicitor(), Events: b})
}

// waitForResponders waits until the responder process answers on the bus.
func waitForResponders(ctx context.Context, b *bus.Bus) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		sctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := b.Sampler().Sample(sctx, agent.SamplingRequest{Messages: []llm.Message{{Role: llm.RoleUser, Text: "ping"}}, MaxTokens: 1})
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("the responder process did not come up: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
