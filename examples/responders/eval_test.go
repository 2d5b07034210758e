package main

import (
	"context"
	"flag"
	"io"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/eval"
	"github.com/switchboard-dev/switchboard/agent/eval/evaltest"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/llm"
)

var update = flag.Bool("update", false, "record testdata/cassettes again with the example's script")

// TestEvals replays the example's task from its cassette: the agent's turns
// come from the cassette; its sampling and permission asks travel over a
// loopback NATS bus to the example's responders (served here by
// serveResponders in this process, as the -serve process does), which
// approve publish_post and decline delete_posts.
func TestEvals(t *testing.T) {
	ctx := context.Background()
	const token = "eval-token"
	b, err := bus.New(ctx, bus.Config{Listen: "127.0.0.1:0", Token: token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- serveResponders(sctx, b.ClientURL(), token, io.Discard) }()
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("responders: %v", err)
		}
	})
	if err := waitForResponders(ctx, b); err != nil {
		t.Fatal(err)
	}
	cfg := eval.Config{Cassettes: "testdata/cassettes",
		Agent: func(ctx context.Context, _ *eval.Case, m llm.Model) (agent.Runner, error) {
			return newAgent(ctx, b, m)
		}}
	if *update {
		cfg.Mode, cfg.Model = eval.Record, llm.NewScripted(script()...)
	}
	rep := evaltest.RunFile(t, "testdata/evals.yaml", cfg)
	if rep.Passed != 1 {
		t.Errorf("passed %d of 1", rep.Passed)
	}
}
