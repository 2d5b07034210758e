package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus/store"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// retryElection repeats f while the cluster elects a leader (a transient,
// unavailable or timed-out answer), until ctx ends.
func retryElection(t *testing.T, ctx context.Context, what string, f func(ctx context.Context) error) {
	t.Helper()
	for {
		fctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		err := f(fctx)
		cancel()
		if err == nil {
			return
		}
		if ctx.Err() != nil || !(errors.Is(err, failure.Unavailable) || errors.Is(err, failure.Transient) || errors.Is(err, failure.Timeout)) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestClusterStore: the durable store replicated on a 3-node cluster.
// Replicas connected to different nodes race on one session (exactly one
// append wins, the history intact) and on one run's takeover (exactly one
// checkpoint wins); after a node is lost, the survivors read what was
// written and take checkpoints.
func TestClusterStore(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test skipped in -short mode")
	}
	ctx := ctxT(t, 90*time.Second)
	nodes := testkit.StartCluster(t)
	var stores []agent.Store
	for i := range 2 {
		b := testkit.ConnectCluster(t, ctx, nodes, i)
		var s agent.Store
		retryElection(t, ctx, "open the store", func(ctx context.Context) (err error) {
			s, err = store.OpenAgent(ctx, b, store.AgentConfig{Replicas: 3})
			return err
		})
		stores = append(stores, s)
	}
	retryElection(t, ctx, "create the session", func(ctx context.Context) error {
		_, err := stores[0].PutSession(ctx, &agent.SessionRecord{ID: "shared"}, 0)
		if errors.Is(err, failure.Conflict) { // a retried create that had landed
			return nil
		}
		return err
	})
	retryElection(t, ctx, "save the checkpoint", func(ctx context.Context) error {
		_, err := stores[0].SaveCheckpoint(ctx, &agent.Checkpoint{Run: "r", Session: "shared", Owner: "o", State: "running"}, 0)
		if errors.Is(err, failure.Conflict) {
			return nil
		}
		return err
	})

	// Eight writers on each replica, all at revision 1.
	const per = 8
	var wg sync.WaitGroup
	errs := make([]error, 2*per)
	cpErrs := make([]error, 2*per)
	for i := range 2 * per {
		s := stores[i%2]
		wg.Go(func() {
			_, errs[i] = s.AppendSession(ctx, &agent.SessionRecord{ID: "shared", Run: fmt.Sprint("r", i),
				History: []llm.Message{{Role: llm.RoleUser, Text: fmt.Sprint(i)}}}, 1)
			_, cpErrs[i] = s.SaveCheckpoint(ctx, &agent.Checkpoint{Run: "r", Session: "shared", Owner: fmt.Sprint("o", i), State: "running"}, 1)
		})
	}
	wg.Wait()
	count := func(errs []error, what string) int {
		wins := 0
		for _, err := range errs {
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, failure.Conflict):
				t.Errorf("a losing %s: %v, want Conflict", what, err)
			}
		}
		return wins
	}
	if n := count(errs, "append"); n != 1 {
		t.Errorf("%d appends won, want 1", n)
	}
	if n := count(cpErrs, "takeover"); n != 1 {
		t.Errorf("%d takeovers won, want 1", n)
	}
	got, err := stores[1].LoadSession(ctx, "shared")
	if err != nil || len(got.History) != 1 || got.Run != "r"+got.History[0].Text || got.Revision != 2 {
		t.Fatalf("the raced session: %+v, %v", got, err)
	}
	cp, err := stores[0].LoadCheckpoint(ctx, "r")
	if err != nil || cp.Revision != 2 {
		t.Fatalf("the raced checkpoint: %+v, %v", cp, err)
	}

	// Lose a node: the survivors still read and write.
	nodes[2].Shutdown()
	nodes[2].WaitForShutdown()
	retryElection(t, ctx, "read after the loss", func(ctx context.Context) error {
		_, err := stores[1].LoadSession(ctx, "shared")
		return err
	})
	rev := cp.Revision
	retryElection(t, ctx, "checkpoint after the loss", func(ctx context.Context) error {
		_, err := stores[1].SaveCheckpoint(ctx, &agent.Checkpoint{Run: "r", Session: "shared", Owner: "after", State: "running"}, rev)
		if errors.Is(err, failure.Conflict) {
			// A retried write that had landed: it is ours if its owner is.
			cur, lerr := stores[1].LoadCheckpoint(ctx, "r")
			if lerr == nil && cur.Owner == "after" {
				return nil
			}
		}
		return err
	})
	if cur, err := stores[0].LoadCheckpoint(ctx, "r"); err != nil || cur.Owner != "after" || cur.Revision != rev+1 {
		t.Errorf("the checkpoint after the loss: %+v, %v", cur, err)
	}
}
