package agent_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// countingPolicy is a default policy that counts the failures it handles.
func countingPolicy(n *atomic.Int64) failure.Policy {
	return failure.NewPolicy(failure.PolicyConfig{OnFailure: func(context.Context, failure.Outcome) { n.Add(1) }})
}

// TestOnePolicy: an agent whose Config has no Policy handles its failures
// with the process default, the one in place at each run (also when it was
// set after New); a Config.Policy wins over the default.
func TestOnePolicy(t *testing.T) {
	t.Cleanup(func() { failure.SetDefault(nil) })
	cases := []struct {
		name     string
		own      bool // Config.Policy is set
		setAfter bool // SetDefault is called after New
		wantDef  int64
		wantOwn  int64
	}{
		{name: "the default", wantDef: 1},
		{name: "the default set after New", setAfter: true, wantDef: 1},
		{name: "the configured", own: true, wantOwn: 1},
		{name: "the configured, default set after New", own: true, setAfter: true, wantOwn: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var def, own atomic.Int64
			failure.SetDefault(nil)
			if !tc.setAfter {
				failure.SetDefault(countingPolicy(&def))
			}
			broken := tool("broken", func(context.Context, json.RawMessage) (*agent.Result, error) {
				return nil, &failure.Error{Kind: failure.ToolError, Source: failure.SourceTool, Message: "no"}
			})
			cfg := agent.Config{Tools: []agent.Tool{broken}, Permissions: agent.AllowAll(),
				Model: llm.NewScripted(llm.Calls(llm.CallTool("c1", "broken", nil)), llm.Say("done"))}
			if tc.own {
				cfg.Policy = countingPolicy(&own)
			}
			a, err := agent.New(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if tc.setAfter {
				failure.SetDefault(countingPolicy(&def))
			}
			if _, err := a.Run(testkit.Ctx(t, 10*time.Second), "go"); err != nil {
				t.Fatal(err)
			}
			if def.Load() != tc.wantDef || own.Load() != tc.wantOwn {
				t.Errorf("failures seen by the default %d, by Config.Policy %d; want %d and %d",
					def.Load(), own.Load(), tc.wantDef, tc.wantOwn)
			}
		})
	}
}
