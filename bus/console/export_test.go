package console

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/llm"
)

// natsChildEnv makes the test binary a NATS server (an embedded bus that
// listens) instead of running tests: the benchmarks keep the server's
// memory out of the console's process.
const natsChildEnv = "CONSOLE_BENCH_NATS_DIR"

func init() {
	dir := os.Getenv(natsChildEnv)
	if dir == "" {
		return
	}
	b, err := bus.New(context.Background(), bus.Config{Listen: "127.0.0.1:0", StoreDir: dir})
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	fmt.Println("URL", b.ClientURL())
	_, _ = io.Copy(io.Discard, os.Stdin) // until the parent closes stdin
	_ = b.Close()
	os.Exit(0)
}

// NatsChild starts a NATS server in a child process and returns its URL
// (for the benchmarks of package console_test).
func NatsChild(b testing.TB) string {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), natsChildEnv+"="+b.TempDir())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
	buf := make([]byte, 256)
	n, err := out.Read(buf)
	if err != nil {
		b.Fatal(err)
	}
	line := strings.TrimSpace(string(buf[:n]))
	u, ok := strings.CutPrefix(line, "URL ")
	if !ok {
		b.Fatalf("nats child: %q", line)
	}
	return u
}

// StoreRuns publishes n finished runs of four events each.
func StoreRuns(b testing.TB, bb *bus.Bus, n int) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	now := time.Now()
	for i := range n {
		run := fmt.Sprintf("run_bench%06d", i)
		usage := llm.Usage{InputTokens: 100, OutputTokens: 20}
		bb.Emit(ctx, agent.Event{Type: agent.EventRunStarted, Run: run, Agent: "bench", Text: "question number " + fmt.Sprint(i), Time: now})
		bb.Emit(ctx, agent.Event{Type: agent.EventTurnStarted, Run: run, Agent: "bench", Turn: 1, Time: now,
			Context: &agent.ContextInfo{Window: 128000, Prompt: 300, System: 100, History: 200}})
		bb.Emit(ctx, agent.Event{Type: agent.EventModelTurn, Run: run, Agent: "bench", Turn: 1, Time: now, Text: "an answer", Usage: &usage})
		bb.Emit(ctx, agent.Event{Type: agent.EventFinal, Run: run, Agent: "bench", Time: now, Text: "an answer",
			Answer: &agent.Answer{Run: run, Text: "an answer", Turns: 1, Usage: usage}})
		if i%500 == 499 {
			if err := bb.Flush(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := bb.Flush(ctx); err != nil {
		b.Fatal(err)
	}
}

// CaughtUp is closed once the console's index has read the events stored
// when it started.
func (c *Console) CaughtUp() <-chan struct{} { return c.ix.caughtUp }
