package a2a

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
)

// TestToolsetPolicy: a toolset given no policy reports its background
// failures (a card refresh of a peer that went away) to the process default,
// also one set after NewToolset; one given a policy keeps it.
func TestToolsetPolicy(t *testing.T) {
	t.Cleanup(func() { failure.SetDefault(nil) })
	for _, own := range []bool{false, true} {
		failure.SetDefault(nil)
		var mine, def atomic.Int32
		count := func(n *atomic.Int32) failure.Policy {
			return failure.NewPolicy(failure.PolicyConfig{MaxAttempts: 1,
				OnFailure: func(context.Context, failure.Outcome) { n.Add(1) }})
		}
		_, worker := newWorker(t, ServerConfig{})
		cfg := ToolsetConfig{Peers: []Peer{{Name: "w", URL: worker.URL}}, RefreshInterval: 20 * time.Millisecond}
		if own {
			cfg.Policy = count(&mine)
		}
		ts, err := NewToolset(ctxT(t), cfg)
		if err != nil {
			t.Fatal(err)
		}
		failure.SetDefault(count(&def))
		worker.Close()
		want := &def
		if own {
			want = &mine
		}
		testkit.WaitFor(t, 20*time.Second, fmt.Sprintf("a failure seen by the policy (own %v)", own), func() bool { return want.Load() > 0 })
		if err := ts.Close(); err != nil {
			t.Fatal(err)
		}
		if want.Load() == 0 || (own && def.Load() != 0) || (!own && mine.Load() != 0) {
			t.Errorf("own policy %v: it saw %d failures, the default %d", own, mine.Load(), def.Load())
		}
	}
}
