package skills

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/switchboard-dev/switchboard/failure"
)

// TestToolsetPolicy: a toolset given no policy reports its failures (here a
// refused skill found on reload) to the process default, also one set after
// New; one given a policy keeps it.
func TestToolsetPolicy(t *testing.T) {
	t.Cleanup(func() { failure.SetDefault(nil) })
	for _, tc := range []struct {
		name    string
		own     bool
		wantOwn int32
		wantDef int32
	}{{"the default", false, 0, 1}, {"configured keeps its own", true, 1, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			var own, def atomic.Int32
			count := func(n *atomic.Int32) failure.Policy {
				return failure.NewPolicy(failure.PolicyConfig{OnFailure: func(context.Context, failure.Outcome) { n.Add(1) }})
			}
			failure.SetDefault(nil)
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
			failure.SetDefault(count(&def))
			writeSkill(t, root, "broken", "name: broken\n", "No description.")
			if _, err := ts.Reload(context.Background()); err != nil {
				t.Fatal(err)
			}
			if own.Load() != tc.wantOwn || def.Load() != tc.wantDef {
				t.Errorf("own policy saw %d, the default %d; want %d and %d", own.Load(), def.Load(), tc.wantOwn, tc.wantDef)
			}
		})
	}
}
