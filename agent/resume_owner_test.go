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
	"github.com/switchboard-dev/switchboard/internal/testkit"
)

// TestResumeWithOwner: a resume under WithOwner (a worker's slot) writes
// the owner it names in the checkpoint, and one that expects a revision
// the checkpoint is no longer at gets a Conflict and writes nothing (an
// orphan sweeper stands aside). Runs the owner function does not name get
// a random owner.
func TestResumeWithOwner(t *testing.T) {
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
			var asked []string
			owner := func(r string) (string, uint64) {
				asked = append(asked, r)
				if r != run {
					return "", 0
				}
				return "worker:pool:w1:own_1", want
			}
			ans, err := durableAgent(t, st, fourTurns(), l, nil, agent.Durability{}).Resume(agent.WithOwner(ctx, owner), run)
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
			if after.Owner != "worker:pool:w1:own_1" || len(asked) != 1 || asked[0] != run {
				t.Errorf("owner %q (asked for %q)", after.Owner, asked)
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
				cancel: func() { cancel(fmt.Errorf("the worker stops: %w", agent.ErrHandover)) }}
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
