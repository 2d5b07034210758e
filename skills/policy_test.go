package skills

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/switchboard-dev/switchboard/failure"
)

// TestUsePolicy: a toolset given no policy reports its failures (here a
// refused skill found on reload) to the policy of the agent it is added to;
// one given a policy keeps it.
func TestUsePolicy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		own     bool
		wantOwn int32
		wantAgt int32
	}{{"default adopts the agent's", false, 0, 1}, {"configured keeps its own", true, 1, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			var own, agt atomic.Int32
			count := func(n *atomic.Int32) failure.Policy {
				return failure.NewPolicy(failure.PolicyConfig{OnFailure: func(context.Context, failure.Outcome) { n.Add(1) }})
			}
			root := t.TempDir()
			writeSkill(t, root, "good", "name: good\ndescription: A good skill.\n", "Body.")
			cfg := Config{Roots: []Root{{Path: root}}}
			if tc.own {
				cfg.Policy = count(&own)
			}
			ts, err := New(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer ts.Close()
			ts.UsePolicy(count(&agt))
			writeSkill(t, root, "broken", "name: broken\n", "No description.")
			if _, err := ts.Reload(context.Background()); err != nil {
				t.Fatal(err)
			}
			if own.Load() != tc.wantOwn || agt.Load() != tc.wantAgt {
				t.Errorf("own policy saw %d, the agent's %d; want %d and %d", own.Load(), agt.Load(), tc.wantOwn, tc.wantAgt)
			}
		})
	}
}
