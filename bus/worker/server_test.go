package worker_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus/worker"
	"github.com/switchboard-dev/switchboard/failure"
)

// TestCapacity: a worker at capacity refuses, and the run goes to another
// worker; when every worker stays busy the run fails as Unavailable.
func TestCapacity(t *testing.T) {
	c := newCluster(t)
	pr := newProbe()
	step := newStep(t, pr)
	servers := []*worker.Server{
		serve(t, c.client("w1"), step, worker.ServeConfig{ID: "w1", MaxConcurrent: 1}),
		serve(t, c.client("w2"), step, worker.ServeConfig{ID: "w2", MaxConcurrent: 1}),
	}
	pool := newPool(t, c.host, "step", worker.PoolConfig{CapacityWait: 300 * time.Millisecond})
	ctx := ctxT(t, 20*time.Second)

	// One run blocks on one worker; runs go on on the other.
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	blocked := make(chan error, 1)
	go func() {
		_, err := agent.Run(bctx, pool, "block first")
		blocked <- err
	}()
	<-pr.started
	busy, free := servers[0], servers[1]
	if busy.Stats().Running == 0 {
		busy, free = free, busy
	}
	for i := 0; i < 6; i++ {
		ans, err := agent.Run(ctx, pool, "work more")
		if err != nil || ans.Text != "result: worked(more)" {
			t.Fatalf("run %d beside a busy worker: %+v, %v", i, ans, err)
		}
		step.next(t)
	}
	waitFor(t, "the free worker to be idle", func() bool { return free.Stats().Running == 0 })
	if s := busy.Stats(); s.Accepted != 1 || s.Running != 1 {
		t.Errorf("busy worker: %+v", s)
	}
	if s := free.Stats(); s.Accepted != 6 {
		t.Errorf("free worker: %+v", s)
	}

	// Both busy: no capacity within CapacityWait.
	bctx2, cancel2 := context.WithCancel(ctx)
	defer cancel2()
	go func() {
		_, err := agent.Run(bctx2, pool, "block second")
		blocked <- err
	}()
	<-pr.started
	start := time.Now()
	_, err := agent.Run(ctx, pool, "work none")
	fe := wantKind(t, err, failure.Unavailable, failure.SourceBus)
	if !strings.Contains(fe.Message, "busy") || time.Since(start) > 5*time.Second {
		t.Errorf("all busy: %v after %s", err, time.Since(start))
	}
	if busy.Stats().Refused+free.Stats().Refused == 0 {
		t.Error("no refusal counted")
	}
	cancel()
	cancel2()
	for i := 0; i < 2; i++ {
		wantKind(t, <-blocked, failure.Canceled, "")
		<-pr.ended
		checkClosed(t, step.next(t).hist)
	}
}

// TestLoadShared: workers of one name share the runs; Workers lists them.
func TestLoadShared(t *testing.T) {
	c := newCluster(t)
	step := newStep(t, newProbe())
	servers := []*worker.Server{
		serve(t, c.client("w1"), step, worker.ServeConfig{ID: "w1", MaxConcurrent: 3}),
		serve(t, c.client("w2"), step, worker.ServeConfig{ID: "w2", MaxConcurrent: 3}),
	}
	pool := newPool(t, c.host, "step", worker.PoolConfig{})
	ctx := ctxT(t, 20*time.Second)

	infos, err := pool.Workers(ctx)
	if err != nil || len(infos) != 2 || infos[0].ID != "w1" || infos[1].ID != "w2" || infos[0].MaxConcurrent != 3 || infos[0].Name != "step" {
		t.Fatalf("Workers = %+v, %v", infos, err)
	}
	const runs = 10
	var wg sync.WaitGroup
	errs := make(chan error, runs)
	for i := 0; i < runs; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ans, err := agent.Run(ctx, pool, "work shared")
			if err == nil && ans.Text != "result: worked(shared)" {
				err = errors.New("wrong answer " + ans.Text)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < runs; i++ {
		step.next(t)
	}
	waitFor(t, "idle workers", func() bool { return servers[0].Stats().Running+servers[1].Stats().Running == 0 })
	a, b := servers[0].Stats(), servers[1].Stats()
	if a.Accepted == 0 || b.Accepted == 0 || a.Accepted+b.Accepted != runs || a.Completed+b.Completed != runs {
		t.Errorf("stats %+v and %+v: the runs were not shared", a, b)
	}
}

// TestWorkerLost: a worker whose connection dies mid-run is noticed by its
// missing heartbeats; the pool runs the input again on the other worker
// (reporting the loss as a handled Transient failure), and the lost
// worker, cut off from its caller's pings, cancels its orphaned run, whose
// history is closed.
func TestWorkerLost(t *testing.T) {
	c := newCluster(t)
	pr := newProbe()
	pr.blockOnce = true
	step := newStep(t, pr)
	b1, b2 := c.client("w1"), c.client("w2")
	s1 := serve(t, b1, step, worker.ServeConfig{ID: "w1"})
	s2 := serve(t, b2, step, worker.ServeConfig{ID: "w2"})
	pool := newPool(t, c.host, "step", worker.PoolConfig{})
	ctx := ctxT(t, 20*time.Second)

	type result struct {
		evs []agent.Event
		err error
	}
	done := make(chan result, 1)
	go func() {
		evs, err := events(pool.Stream(ctx, "block once"))
		done <- result{evs, err}
	}()
	<-pr.started
	lost := b1
	if s2.Stats().Running == 1 {
		lost = b2
	}
	lost.Conn().Close() // as if the process died: no more heartbeats
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	last := res.evs[len(res.evs)-1]
	if last.Answer == nil || last.Answer.Text != "result: unblocked(once)" {
		t.Fatalf("last event %+v", last)
	}
	var lossReported bool
	for _, ev := range res.evs {
		if ev.Type == agent.EventFailure && ev.Failure.Kind == failure.Transient && ev.Failure.Name == "worker/step" &&
			strings.Contains(ev.Failure.Message, "stopped answering") && ev.Agent == "step" && ev.Run != last.Run {
			lossReported = true
		}
	}
	if !lossReported {
		t.Errorf("the worker's loss was not reported: %s", types(res.evs))
	}
	// The orphaned run was cancelled by its worker and closed; the retry
	// completed.
	var orphan, retried int
	for i := 0; i < 2; i++ {
		r := step.next(t)
		checkClosed(t, r.hist)
		if r.err != nil {
			orphan++
			fe := wantKind(t, r.err, failure.Canceled, failure.SourceBus)
			if !strings.Contains(fe.Message, "caller stopped answering") {
				t.Errorf("orphan ended with %v", r.err)
			}
		} else {
			retried++
		}
	}
	if orphan != 1 || retried != 1 {
		t.Errorf("%d orphaned and %d retried runs", orphan, retried)
	}
	if got := <-pr.ended; !errors.Is(got, context.Canceled) {
		t.Errorf("the orphaned tool ended with %v", got)
	}
	waitFor(t, "both workers idle", func() bool { return s1.Stats().Running == 0 && s2.Stats().Running == 0 })
}

// TestCallerLost: a caller whose connection dies mid-run stops pinging;
// the worker cancels the run, whose history is closed.
func TestCallerLost(t *testing.T) {
	c := newCluster(t)
	pr := newProbe()
	step := newStep(t, pr)
	srv := serve(t, c.host, step, worker.ServeConfig{})
	caller := c.client("caller")
	pool := newPool(t, caller, "step", worker.PoolConfig{})

	done := make(chan error, 1)
	go func() {
		_, err := agent.Run(ctxT(t, 20*time.Second), pool, "block forever")
		done <- err
	}()
	<-pr.started
	caller.Conn().Close()
	wantKind(t, <-done, failure.Unavailable, failure.SourceBus)
	r := step.next(t)
	checkClosed(t, r.hist)
	wantKind(t, r.err, failure.Canceled, failure.SourceBus)
	<-pr.ended
	waitFor(t, "the worker to be idle", func() bool { return srv.Stats().Running == 0 })
}

// TestStop: a stopping worker takes no new runs; its running runs finish
// within the grace, or are cancelled and handed back to their pools, which
// run them on another worker.
func TestStop(t *testing.T) {
	tests := []struct {
		name  string
		input string
		grace time.Duration
		want  string
	}{
		{"grace lets the run finish", "ask nicely", 10 * time.Second, "result: answer: yes"},
		{"handed over at once", "block once", 0, "result: unblocked(once)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t)
			pr := newProbe()
			pr.blockOnce = true
			step := newStep(t, pr)
			b1 := c.client("w1")
			sctx, stop := context.WithCancel(context.Background())
			defer stop()
			s1, err := worker.Serve(sctx, b1, step, worker.ServeConfig{ID: "w1", Grace: tt.grace})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s1.Close() })
			asked := make(chan struct{})
			release := make(chan struct{})
			pool := newPool(t, c.host, "step", worker.PoolConfig{Elicitor: agent.ElicitorFunc(
				func(context.Context, agent.Elicitation) (agent.ElicitationResult, error) {
					close(asked)
					<-release
					return agent.ElicitationResult{Action: agent.ElicitAccept, Content: map[string]any{"text": "yes"}}, nil
				})})
			ctx := ctxT(t, 20*time.Second)
			done := make(chan error, 1)
			var ans *agent.Answer
			go func() {
				var err error
				ans, err = agent.Run(ctx, pool, tt.input)
				done <- err
			}()
			select {
			case <-pr.started:
			case <-asked:
			}
			// A second worker joins; the first is told to stop.
			serve(t, c.client("w2"), step, worker.ServeConfig{ID: "w2"})
			stop()
			if tt.grace > 0 {
				waitFor(t, "w1 to stop taking runs", func() bool {
					infos, _ := pool.Workers(ctx)
					return len(infos) == 1 && infos[0].ID == "w2"
				})
				if _, err := agent.Run(ctx, pool, "work meanwhile"); err != nil {
					t.Fatal(err)
				}
				step.next(t)
				close(release)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if ans.Text != tt.want {
				t.Errorf("answer %q, want %q", ans.Text, tt.want)
			}
			<-s1.Done()
			if s := s1.Stats(); s.Accepted != 1 || s.Running != 0 || s.Completed != 1 {
				t.Errorf("w1 stats %+v", s)
			}
			for i := 0; i < 1+boolInt(tt.grace == 0); i++ {
				checkClosed(t, step.next(t).hist)
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
