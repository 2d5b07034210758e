package worker_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/store"
	"github.com/switchboard-dev/switchboard/bus/worker"
	"github.com/switchboard-dev/switchboard/failure"
)

// The child processes of TestDurableWorkersKilled (the test binary
// re-executed): durable workers, and callers whose pools start runs until
// they are killed.
const (
	// envDurableOrphanMS is the workers' ServeConfig.OrphanAfter.
	envDurableOrphanMS = "SWITCHBOARD_DURABLE_ORPHAN_MS"
	// envDurableCaller makes the process a caller running that many runs
	// at a time.
	envDurableCaller = "SWITCHBOARD_DURABLE_CALLER"
	// callerRunning is the line a caller writes once its runs are going.
	callerRunning = "caller: runs are going"
	// orphanLogLine is what a worker logs when it resumes an orphan, and
	// servingLogLine what it logs once serving.
	orphanLogLine  = "resuming an orphaned run"
	servingLogLine = "worker process serving"
)

// durableWorkerProcess serves the durable agent until killed (or
// interrupted). Its worker logs (JSON) go to stderr.
func durableWorkerProcess() int {
	began := time.Now()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	id := os.Getenv(envDurableID)
	// Every handled failure is also reported on <prefix>.failures, at
	// once, on the connection the run's store writes go through: a call
	// left in doubt is reported before its result is stored.
	var bp atomic.Pointer[bus.Bus]
	policy := failure.NewPolicy(failure.PolicyConfig{OnFailure: func(ctx context.Context, o failure.Outcome) {
		if b := bp.Load(); b != nil {
			b.ReportFailure(ctx, o)
		}
	}})
	b, err := bus.New(ctx, bus.Config{URLs: []string{os.Getenv(envDurableURL)}, Token: os.Getenv(envDurableToken), Name: id, Policy: policy})
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	defer b.Close()
	bp.Store(b)
	st, err := store.OpenAgent(ctx, b, store.AgentConfig{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	a, err := agent.New(ctx, agent.Config{Name: "durable", Model: durableModel{}, Tools: durableTools(os.Getenv(envChargeLog)),
		Permissions: agent.AllowAll(), Durable: agent.Durable(st, 0), Policy: policy, Budget: agent.Budget{MaxTurns: durableTurns + 2}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	ms, _ := strconv.Atoi(os.Getenv(envDurableOrphanMS))
	log := zerolog.New(os.Stderr).Level(zerolog.InfoLevel).With().Timestamp().Logger()
	srv, err := worker.Serve(ctx, b, a, worker.ServeConfig{ID: id, MaxConcurrent: 16, Logger: &log,
		OrphanAfter: time.Duration(ms) * time.Millisecond, OrphanScan: time.Duration(ms) * time.Millisecond / 3})
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	log.Info().Dur("startup", time.Since(began)).Msg(servingLogLine)
	<-srv.Done()
	return 0
}

// durableCallerProcess runs inputs on the durable pool, n at a time, until
// killed: its runs' callers die with it.
func durableCallerProcess(n int) int {
	ctx := context.Background()
	id := os.Getenv(envDurableID)
	b, err := bus.New(ctx, bus.Config{URLs: []string{os.Getenv(envDurableURL)}, Token: os.Getenv(envDurableToken), Name: id})
	if err != nil {
		fmt.Fprintln(os.Stderr, "caller:", err)
		return 1
	}
	pool, err := worker.NewPool(b, "durable", worker.PoolConfig{Heartbeat: 200 * time.Millisecond, MissedHeartbeats: 5,
		CapacityWait: 30 * time.Second, Policy: testkitPolicy(1000)})
	if err != nil {
		fmt.Fprintln(os.Stderr, "caller:", err)
		return 1
	}
	var started atomic.Int64
	var once sync.Once
	for g := range n {
		go func() {
			for i := 0; ; i++ {
				for ev := range pool.Stream(ctx, fmt.Sprintf("%s order %d.%d", id, g, i)) {
					if ev.Type == agent.EventRunStarted && started.Add(1) >= int64(n) {
						once.Do(func() { fmt.Fprintln(os.Stderr, callerRunning) })
					}
				}
			}
		}()
	}
	select {} // until killed
}

// startChild re-executes the test binary with env; its output goes to a
// log file, returned with the process.
func startChild(t *testing.T, id string, env ...string) *process {
	t.Helper()
	log, err := os.Create(t.TempDir() + "/" + id + ".log")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), envDurableID+"="+id), env...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, log: log}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = p.wait()
		if out, _ := os.ReadFile(log.Name()); t.Failed() && len(out) > 0 {
			t.Logf("%s output:\n%s", id, firstN(string(out), 2000))
		}
		log.Close()
	})
	return p
}

// kill SIGKILLs the process and reaps it.
func (p *process) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	_ = p.wait()
}

// logLines counts the lines of the process's log containing s.
func (p *process) logLines(s string) int {
	out, _ := os.ReadFile(p.log.Name())
	return strings.Count(string(out), s)
}
