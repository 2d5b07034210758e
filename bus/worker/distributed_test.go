package worker_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/workflow"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/worker"
	"github.com/switchboard-dev/switchboard/failure"
)

// The environment of a worker process (the test binary re-executed).
const (
	envWorkerURL   = "SWITCHBOARD_WORKER_URL"
	envWorkerToken = "SWITCHBOARD_WORKER_TOKEN"
	envWorkerID    = "SWITCHBOARD_WORKER_ID"
	// claimSubject is where a worker process's block tool asks the test
	// whether to block ("block") or go on ("go").
	claimSubject = "swtest.claim"
)

// workerProcess serves the step agent on the bus at $SWITCHBOARD_WORKER_URL
// until it is killed or interrupted (then it stops cleanly).
func workerProcess() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	id := os.Getenv(envWorkerID)
	b, err := bus.New(ctx, bus.Config{URLs: []string{os.Getenv(envWorkerURL)}, Token: os.Getenv(envWorkerToken), Name: id})
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	defer b.Close()
	a, err := agent.New(ctx, agent.Config{Name: "step", Model: stepModel(), Tools: processTools(b, id),
		Permissions: agent.AllowAll(), Elicitor: worker.Elicitor(nil), Budget: agent.Budget{MaxTurns: 3}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	srv, err := worker.Serve(ctx, b, a, worker.ServeConfig{ID: id})
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	<-srv.Done()
	return 0
}

// processTools are a worker process's tools: work, and block, which asks
// the test whether to block until cancelled (or killed).
func processTools(b *bus.Bus, id string) []agent.Tool {
	arg := func(args json.RawMessage) string {
		var a struct{ Input string }
		_ = json.Unmarshal(args, &a)
		return a.Input
	}
	work := agent.NewFuncTool(agent.ToolSpec{Name: "work", Description: "Does work."},
		func(_ context.Context, args json.RawMessage) (*agent.Result, error) {
			return agent.TextResult(fmt.Sprintf("worked(%s) by %s", arg(args), id)), nil
		})
	block := agent.NewFuncTool(agent.ToolSpec{Name: "block", Description: "Blocks when told to."},
		func(ctx context.Context, args json.RawMessage) (*agent.Result, error) {
			msg, err := b.Conn().RequestWithContext(ctx, claimSubject, []byte(id))
			if err != nil {
				return nil, err
			}
			if string(msg.Data) == "block" {
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return agent.TextResult(fmt.Sprintf("unblocked(%s) by %s", arg(args), id)), nil
		})
	return []agent.Tool{work, block}
}

// process is a worker process started by the test.
type process struct {
	cmd  *exec.Cmd
	log  *os.File
	once sync.Once
	err  error
}

// wait reaps the process once.
func (p *process) wait() error {
	p.once.Do(func() { p.err = p.cmd.Wait() })
	return p.err
}

// startWorker re-executes the test binary as a worker process.
func startWorker(t *testing.T, url, token, id string) *process {
	t.Helper()
	log, err := os.Create(t.TempDir() + "/" + id + ".log")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envWorkerURL+"="+url, envWorkerToken+"="+token, envWorkerID+"="+id)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, log: log}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = p.wait()
		if out, _ := os.ReadFile(log.Name()); t.Failed() && len(out) > 0 {
			t.Logf("%s output:\n%s", id, out)
		}
		log.Close()
	})
	return p
}

// TestDistributedWorkerKilled: two worker processes serve the same step;
// a pipeline (a parallel workflow) runs four steps on them; the process that took
// the blocking step is killed (SIGKILL) mid-run, and the pipeline still
// completes: the pool notices the lost worker and runs the step again on
// the other process. The survivor then stops cleanly on SIGINT.
func TestDistributedWorkerKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	token := rand.Text()
	host := newBus(t, bus.Config{Listen: "127.0.0.1:0", Token: token})
	ctx := ctxT(t, 30*time.Second)

	// The first block call blocks (its process will be killed); later
	// ones go on.
	claims := make(chan string, 4)
	var mu sync.Mutex
	n := 0
	sub, err := host.Conn().Subscribe(claimSubject, func(msg *nats.Msg) {
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		if first {
			_ = msg.Respond([]byte("block"))
			claims <- string(msg.Data)
			return
		}
		_ = msg.Respond([]byte("go"))
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()

	procs := map[string]*process{}
	for _, id := range []string{"w1", "w2"} {
		procs[id] = startWorker(t, host.ClientURL(), token, id)
	}
	pool := newPool(t, host, "step", worker.PoolConfig{})
	waitFor(t, "two worker processes", func() bool {
		infos, err := pool.Workers(ctx)
		return err == nil && len(infos) == 2
	})

	// The pipeline: four steps on the pool, in parallel.
	var branches []workflow.Step
	for _, in := range []string{"work a", "block b", "work c", "work d"} {
		branches = append(branches, workflow.Step{Runner: pool, Name: strings.ReplaceAll(in, " ", "-"), Input: fixed(in)})
	}
	pipeline, err := workflow.NewParallel(workflow.ParallelConfig{Common: workflow.Common{Name: "pipeline", Policy: fastPolicy()},
		Branches: branches, MaxParallel: 4})
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		evs []agent.Event
		err error
	}
	done := make(chan result, 1)
	go func() {
		evs, err := events(pipeline.Stream(ctx, "four steps"))
		done <- result{evs, err}
	}()
	var killed string
	select {
	case killed = <-claims:
	case <-ctx.Done():
		t.Fatal("no worker blocked")
	}
	if err := procs[killed].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = procs[killed].wait()
	survivor := map[string]string{"w1": "w2", "w2": "w1"}[killed]

	res := <-done
	if res.err != nil {
		t.Fatalf("the pipeline failed: %v\n%s", res.err, types(res.evs))
	}
	final := res.evs[len(res.evs)-1].Text
	if !strings.Contains(final, "unblocked(b) by "+survivor) {
		t.Errorf("the blocked step did not complete on %s:\n%s", survivor, final)
	}
	for _, step := range []string{"worked(a) by", "worked(c) by", "worked(d) by"} {
		if !strings.Contains(final, step) {
			t.Errorf("the pipeline's answer lacks %q:\n%s", step, final)
		}
	}
	var lost bool
	for _, ev := range res.evs {
		if n := ev.Nested; ev.Type == agent.EventNested && n.Type == agent.EventFailure &&
			n.Failure.Kind == failure.Transient && strings.Contains(n.Failure.Message, "worker "+killed+" stopped answering") {
			lost = true
		}
	}
	if !lost {
		t.Errorf("the loss of %s was not reported in the pipeline's events: %s", killed, types(res.evs))
	}
	infos, err := pool.Workers(ctx)
	if err != nil || len(infos) != 1 || infos[0].ID != survivor {
		t.Errorf("Workers after the kill = %+v, %v", infos, err)
	}

	// The survivor stops cleanly.
	if err := procs[survivor].cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := procs[survivor].wait(); err != nil {
		t.Errorf("the surviving worker exited with %v", err)
	}
}
