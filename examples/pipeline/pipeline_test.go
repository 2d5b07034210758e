package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboard-dev/switchboard/agent"
)

// workerEnv makes the test binary a worker process (see testWorker).
const workerEnv = "PIPELINE_TEST_WORKER_URL"

func TestMain(m *testing.M) {
	if url := os.Getenv(workerEnv); url != "" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := RunWorker(ctx, url, os.Getenv(TokenEnv), os.Stdout)
		stop()
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// testWorker starts this test binary again as the worker process.
func testWorker(url string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), workerEnv+"="+url)
	return cmd
}

func start(t *testing.T) *Pipeline {
	t.Helper()
	p, err := Start(context.Background(), Options{Worker: testWorker})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestPipeline runs the whole pipeline: the performance specialist answers
// from the worker process, and its events (tool progress included) arrive
// nested under the parallel step that started it.
func TestPipeline(t *testing.T) {
	p := start(t)
	if p.WorkerPID == os.Getpid() || p.WorkerPID == 0 {
		t.Fatalf("worker pid %d", p.WorkerPID)
	}
	var evs []agent.Event
	var final string
	for ev, err := range p.Runner.Stream(ctxT(t), "Review PR 42") {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
		if ev.Type == agent.EventFinal {
			final = ev.Text
		}
	}
	for _, want := range []string{"Approve. Findings from 2 specialists", "no secrets logged",
		"Performance (worker process " + strconv.Itoa(p.WorkerPID) + ")", "1.3 ms"} {
		if !strings.Contains(final, want) {
			t.Fatalf("final %q lacks %q", final, want)
		}
	}
	// The remote run is placed in the tree: its parent is the parallel
	// workflow's run, step "performance"; its progress came over the bus.
	runs := map[string]string{}
	var perfParent *agent.Parent
	progress := 0
	for _, ev := range evs {
		if ev.Type != agent.EventNested {
			continue
		}
		n := ev.Nested
		runs[n.Agent] = n.Run
		if n.Agent == "performance" {
			perfParent = n.Parent
			if n.Type == agent.EventToolProgress {
				progress++
			}
		}
	}
	if perfParent == nil || perfParent.Run != runs["specialists"] || perfParent.Step != "performance" {
		t.Fatalf("performance's parent = %+v; specialists' run %s", perfParent, runs["specialists"])
	}
	if progress != 2 {
		t.Fatalf("%d progress events from the worker, want 2", progress)
	}
}

// TestWorkerGone stops the worker process first: the performance branch
// fails (no worker serves it), is dropped with a note, and the reviewer
// says a review is missing.
func TestWorkerGone(t *testing.T) {
	p := start(t)
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.waited
	p.waited <- nil // for Close
	var out bytes.Buffer
	if err := Print(ctxT(t), &out, p.Runner.Stream(ctxT(t), "Review PR 43")); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"! unavailable", "Approve once the missing review is done (performance)", "Findings from 1 specialist:"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("output lacks %q:\n%s", want, out.String())
		}
	}
}
