package agent_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/runowner"
	"github.com/switchboard-dev/switchboard/internal/testkit"
)

// TestResumeThroughSlot: a resume in a worker's slot (internal/runowner)
// names the worker in the checkpoint's owner, and one that expects a
// revision the checkpoint is no longer at gets a Conflict and writes
// nothing (an orphan sweeper stands aside).
func TestResumeThroughSlot(t *testing.T) {
	ctx := testkit.Ctx(t, 20*time.Second)
	for _, tc := range []struct {
		name  string
		stale bool
	}{{"current revision", false}, {"stale revision", true}} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLedger()
			st, run := killedRun(t, ctx, 9, l)
			cp, err := st.LoadCheckpoint(ctx, run)
			if err != nil {
				t.Fatal(err)
			}
			want := cp.Revision
			if tc.stale {
				want--
			}
			slot := runowner.NewSlot("pool", "w1")
			slot.Expect(run, want)
			ans, err := durableAgent(t, st, fourTurns(), l, nil, agent.Durability{}).Resume(runowner.With(ctx, slot), run)
			after, lerr := st.LoadCheckpoint(ctx, run)
			if lerr != nil {
				t.Fatal(lerr)
			}
			if tc.stale {
				if !errors.Is(err, failure.Conflict) || after.Revision != cp.Revision || after.Owner != cp.Owner {
					t.Fatalf("stale resume: %v; checkpoint revision %d owner %q (was %d %q)", err, after.Revision, after.Owner, cp.Revision, cp.Owner)
				}
				return
			}
			if err != nil || ans.Text != "all done" || after.State != "done" {
				t.Fatalf("resume: %+v, %v; state %s", ans, err, after.State)
			}
			if pool, worker, ok := runowner.Parse(after.Owner); !ok || pool != "pool" || worker != "w1" || slot.Run() != run {
				t.Errorf("owner %q (slot run %q)", after.Owner, slot.Run())
			}
		})
	}
}

// TestHandoverHaltsRun: a durable run cancelled with a handover cause (a
// worker stopping, a pool that lost contact) stops writing at once and
// stays resumable, instead of being recorded as failed; the resume
// finishes it without repeating a side-effecting call. Cancelled at each
// of its store writes.
func TestHandoverHaltsRun(t *testing.T) {
	ctx := testkit.Ctx(t, 60*time.Second)
	for n := 2; n <= 20; n++ {
		t.Run(fmt.Sprint("write ", n), func(t *testing.T) {
			l := newLedger()
			base := agent.NewMemoryStore(agent.MemoryStoreOptions{})
			rctx, cancel := context.WithCancelCause(ctx)
			defer cancel(nil)
			ks := &killStore{Store: base, n: n, stopOnly: true,
				cancel: func() { cancel(fmt.Errorf("the worker stops: %w", runowner.ErrHandover)) }}
			ans, _ := durableAgent(t, ks, fourTurns(), l, nil, agent.Durability{}).Run(rctx, "go")
			cp, err := base.LoadCheckpoint(ctx, ans.Run)
			if err != nil {
				t.Fatal(err)
			}
			if cp.State == "failed" {
				t.Fatalf("a handed-over run was recorded failed (%s)", cp.Error)
			}
			res, err := durableAgent(t, base, fourTurns(), l, nil, agent.Durability{}).Resume(ctx, ans.Run)
			if err != nil || res.Text != "all done" {
				t.Fatalf("resume: %+v, %v", res, err)
			}
			for key, runs := range l.runs {
				if runs > 1 && !strings.Contains(l.tool[key], "mail") && !strings.Contains(l.tool[key], "look") {
					t.Errorf("%s (%s) ran %d times", key, l.tool[key], runs)
				}
			}
		})
	}
}
