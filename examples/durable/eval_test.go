package main

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/eval"
	"github.com/switchboard-dev/switchboard/agent/eval/evaltest"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/store"
	"github.com/switchboard-dev/switchboard/llm"
)

var update = flag.Bool("update", false, "record testdata/cassettes again with the example's planner model")

// TestEvals replays the planner's run from its cassette through the
// durable agent every service process runs (its checkpoints in the bus's
// JetStream store), scores its calls and answer, and checks that the room
// was booked once.
func TestEvals(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	b, err := bus.New(ctx, bus.Config{StoreDir: filepath.Join(dir, "nats")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	st, err := store.OpenAgent(ctx, b, store.AgentConfig{})
	if err != nil {
		t.Fatal(err)
	}
	bookings := filepath.Join(dir, "bookings.txt")
	cfg := eval.Config{Cassettes: "testdata/cassettes",
		Agent: func(ctx context.Context, _ *eval.Case, m llm.Model) (agent.Runner, error) {
			return newAgent(ctx, st, bookings, m)
		}}
	if *update {
		cfg.Mode, cfg.Model = eval.Record, plannerModel()
	}
	rep := evaltest.RunFile(t, "testdata/evals.yaml", cfg)
	if rep.Passed != 1 {
		t.Errorf("passed %d of 1", rep.Passed)
	}
	data, err := os.ReadFile(bookings)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n != 1 {
		t.Errorf("bookings made: %d, want 1:\n%s", n, data)
	}
}
