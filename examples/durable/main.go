// Command durable shows a run surviving the death of the process running
// it: a service (a bus/worker process serving a durable agent) is killed
// with SIGKILL in the middle of a run, and a second service process
// finishes the run from its last checkpoint, without running again the
// tool call that had already taken effect.
//
//	go run ./examples/durable
//
// The program starts an embedded NATS server with JetStream (file storage)
// on a loopback port, starts itself again as service A, and sends a run to
// the pool of services. When A reports that the booking is made, the
// program kills A and starts service B; the pool notices the loss and B
// resumes the run: it does not book again, and answers.
package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/otelenv"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/store"
	"github.com/switchboard-dev/switchboard/bus/worker"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// The environment of a service process (this program started again).
const (
	envURL   = "DURABLE_EXAMPLE_URL"
	envToken = "DURABLE_EXAMPLE_TOKEN"
	envName  = "DURABLE_EXAMPLE_NAME"
	envLog   = "DURABLE_EXAMPLE_BOOKINGS"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer otelenv.Main(ctx, "example-durable", os.Stderr)() // the OTEL_* environment's traces and metrics (none when unset)
	var err error
	if os.Getenv(envURL) != "" {
		err = serve(ctx, os.Getenv(envURL), os.Getenv(envToken), os.Getenv(envName), os.Getenv(envLog))
	} else {
		err = run(ctx, os.Stdout, os.Args[0])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// task is what the demonstration asks of the planner.
const task = "Book a room for tomorrow's meeting and invite the team."

// newAgent is the durable agent every service process runs: the same name,
// model (plannerModel) and tools, and the store on the bus.
func newAgent(ctx context.Context, st agent.Store, bookings string, model llm.Model) (*agent.Agent, error) {
	book := agent.NewFuncTool(agent.ToolSpec{Name: "book_room", Description: "Books a meeting room (not idempotent)."},
		func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
			c, _ := agent.CallFromContext(ctx)
			f, err := os.OpenFile(bookings, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			fmt.Fprintf(f, "booked by %s (call %s)\n", os.Getenv(envName), c.ID)
			return agent.TextResult("room 4.2 booked for 10:00"), nil
		})
	invite := agent.NewFuncTool(agent.ToolSpec{Name: "send_invites", Description: "Sends the invitations.", Idempotent: true},
		func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
			// Slow enough for the demonstration to kill the service here.
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(3 * time.Second):
			}
			return agent.TextResult("invitations sent by " + os.Getenv(envName)), nil
		})
	return agent.New(ctx, agent.Config{Name: "planner", Model: model, Tools: []agent.Tool{book, invite},
		Permissions: agent.AllowAll(), Durable: agent.Durable(st, 0)})
}

// plannerModel is the scripted planner: book the room, send the
// invitations, answer.
func plannerModel() llm.Model {
	return llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
		switch tools := countTools(req.Messages); tools {
		case 0:
			return llm.Calls(llm.CallTool("book", "book_room", map[string]any{"time": "10:00"}))
		case 1:
			return llm.Calls(llm.CallTool("invite", "send_invites", map[string]any{"room": "4.2"}))
		default:
			return llm.Say("The meeting is set: room 4.2 at 10:00, invitations sent.")
		}
	}))
}

func countTools(msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == llm.RoleTool {
			n++
		}
	}
	return n
}

// serve is a service process: it serves the planner on the bus until it
// is stopped (or killed).
func serve(ctx context.Context, url, token, name, bookings string) error {
	b, err := bus.New(ctx, bus.Config{URLs: []string{url}, Token: token, Name: name})
	if err != nil {
		return err
	}
	defer b.Close()
	st, err := store.OpenAgent(ctx, b, store.AgentConfig{})
	if err != nil {
		return err
	}
	a, err := newAgent(ctx, st, bookings, plannerModel())
	if err != nil {
		return err
	}
	srv, err := worker.Serve(ctx, b, a, worker.ServeConfig{ID: name})
	if err != nil {
		return err
	}
	<-srv.Done()
	return nil
}

// run is the demonstration: the bus, service A, the run, the kill, service
// B. self is this program's path (started again as a service).
func run(ctx context.Context, out io.Writer, self string) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	dir, err := os.MkdirTemp("", "durable-example-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	token := rand.Text()
	b, err := bus.New(ctx, bus.Config{Listen: "127.0.0.1:0", Token: token, StoreDir: dir + "/nats"})
	if err != nil {
		return err
	}
	defer b.Close()
	bookings := dir + "/bookings.txt"
	start := func(name string) (*exec.Cmd, error) {
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), envURL+"="+b.ClientURL(), envToken+"="+token, envName+"="+name, envLog+"="+bookings)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		return cmd, cmd.Start()
	}
	a, err := start("service-A")
	if err != nil {
		return err
	}
	var procs []*exec.Cmd
	procs = append(procs, a)
	var once sync.Once
	defer func() {
		for _, p := range procs {
			_ = p.Process.Signal(os.Interrupt)
			_ = p.Wait()
		}
	}()
	pool, err := worker.NewPool(b, "planner", worker.PoolConfig{Heartbeat: 200 * time.Millisecond, CapacityWait: 30 * time.Second,
		Policy: failure.NewPolicy(failure.PolicyConfig{MaxAttempts: 5, InitialBackoff: 100 * time.Millisecond})})
	if err != nil {
		return err
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if ws, err := pool.Workers(ctx); err == nil && len(ws) > 0 {
			break
		}
		if time.Now().After(deadline) {
			return errors.New("service A did not start")
		}
	}
	fmt.Fprintln(out, "service A serves the planner; the run starts")
	var answer string
	for ev, err := range pool.Stream(ctx, task) {
		if err != nil {
			return err
		}
		switch {
		case ev.Type == agent.EventToolFinished && ev.Call != nil:
			fmt.Fprintf(out, "  %s: %s\n", ev.Call.Tool, firstLine(ev.Result.Text()))
		case ev.Type == agent.EventToolStarted && ev.Call != nil && ev.Call.Tool == "send_invites":
			once.Do(func() {
				// The booking is made; kill service A while it sends the
				// invitations, and start service B.
				fmt.Fprintln(out, "  (killing service A with SIGKILL while it sends the invitations)")
				_ = a.Process.Kill()
				_ = a.Wait()
				procs = procs[1:]
				if bsvc, err := start("service-B"); err == nil {
					procs = append(procs, bsvc)
					fmt.Fprintln(out, "service B starts and resumes the run from its checkpoint")
				}
			})
		case ev.Type == agent.EventFailure && ev.Failure != nil:
			fmt.Fprintf(out, "  (%s: %s)\n", ev.Failure.Kind, ev.Failure.Message)
		case ev.Type == agent.EventFinal:
			answer = ev.Text
		}
	}
	data, err := os.ReadFile(bookings)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "answer: %s\n", firstLine(answer))
	fmt.Fprintf(out, "bookings made: %d\n%s", strings.Count(string(data), "\n"), data)
	return nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "<") {
			return l
		}
	}
	return s
}
