package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/agenttest"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/store"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// TestStoreConformance runs the agent.Store suite on the JetStream store
// (an embedded server with file storage; each test its own buckets): with
// the default inline limit, and with every record over 64 bytes in the
// object store.
func TestStoreConformance(t *testing.T) {
	b := newBus(t, bus.Config{})
	for _, tc := range []struct {
		name   string
		inline int
	}{{"inline", 0}, {"object store", 64}} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			agenttest.RunStoreSuite(t, agenttest.Harness[agent.Store]{
				New: func(t *testing.T) agent.Store {
					n++
					ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
					defer cancel()
					s, err := store.OpenAgentInline(ctx, b, store.AgentConfig{Name: fmt.Sprintf("conf%d_%d", tc.inline, n),
						// Twelve stores on one server: each bucket's limit is
						// reserved from the server's storage (a fraction of
						// the free disk).
						MaxBucketBytes: 64 << 20}, tc.inline)
					if err != nil {
						t.Fatal(err)
					}
					return s
				},
				TTLStep: time.Second,
			})
		})
	}
}

// TestStoreSurvivesServerRestart: records written before the embedded
// server stops (file storage) are read, and written at their revisions,
// after it restarts on the same directory, by a new process's store (no
// cache of what was written); a record over the server's maximum message
// size (2 MB of history) is kept in the object store and survives too.
func TestStoreSurvivesServerRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := ctxT(t, 60*time.Second)
	open := func() (*bus.Bus, agent.Store) {
		b, err := bus.New(ctx, bus.Config{StoreDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		s, err := store.OpenAgent(ctx, b, store.AgentConfig{})
		if err != nil {
			b.Close()
			t.Fatal(err)
		}
		return b, s
	}
	start := time.Now()
	step := func(what string) { t.Logf("%6.2fs %s", time.Since(start).Seconds(), what) }
	b, s := open()
	big := strings.Repeat("a long tool result ", 2<<20/19)
	if _, err := s.PutSession(ctx, &agent.SessionRecord{ID: "big", History: []llm.Message{{Role: llm.RoleUser, Text: big}}}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutSession(ctx, &agent.SessionRecord{ID: "s", History: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SaveCheckpoint(ctx, &agent.Checkpoint{Run: "r", Session: "s", State: "parked", Question: "q"}, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.PutIntent(ctx, &agent.CallRecord{Run: "r", Call: "c1", Tool: "pay"}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutQuestion(ctx, &agent.Question{ID: "q", Run: "r", Deadline: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	step("written")
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	step("closed")
	b, s = open()
	defer b.Close()
	step("reopened")
	got, err := s.LoadSession(ctx, "big")
	if err != nil || len(got.History) != 1 || got.History[0].Text != big {
		t.Fatalf("the large session after a restart: %v", err)
	}
	if rev, err := s.AppendSession(ctx, &agent.SessionRecord{ID: "s", History: []llm.Message{{Role: llm.RoleUser, Text: "again"}}}, 1); err != nil || rev != 2 {
		t.Errorf("append after a restart: %d, %v", rev, err)
	}
	if _, err := s.SaveCheckpoint(ctx, &agent.Checkpoint{Run: "r", State: "running"}, 2); !errors.Is(err, failure.Conflict) {
		t.Errorf("a checkpoint at a stale revision after a restart: %v, want Conflict", err)
	}
	if rev, err := s.SaveCheckpoint(ctx, &agent.Checkpoint{Run: "r", State: "running"}, 1); err != nil || rev != 2 {
		t.Errorf("a checkpoint after a restart: %d, %v", rev, err)
	}
	if err := s.PutIntent(ctx, &agent.CallRecord{Run: "r", Call: "c1", Tool: "pay"}); !errors.Is(err, failure.Conflict) {
		t.Errorf("a second intent after a restart: %v, want Conflict", err)
	}
	if q, err := s.AnswerQuestion(ctx, "q", agent.ElicitationResult{Action: agent.ElicitAccept}); err != nil || q.Run != "r" {
		t.Errorf("answer after a restart: %+v, %v", q, err)
	}
}

// TestStoreLimits: a record over MaxRecordBytes and a write to a full
// bucket are Budget failures, and the store's records stay as they were.
func TestStoreLimits(t *testing.T) {
	b := newBus(t, bus.Config{})
	ctx := ctxT(t, 30*time.Second)
	s, err := store.OpenAgent(ctx, b, store.AgentConfig{Name: "limits", MaxRecordBytes: 1000, MaxBucketBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutSession(ctx, &agent.SessionRecord{ID: "s"}, 0); err != nil {
		t.Fatal(err)
	}
	long := []llm.Message{{Role: llm.RoleUser, Text: strings.Repeat("x", 1000)}}
	if _, err := s.AppendSession(ctx, &agent.SessionRecord{ID: "s", History: long}, 1); !errors.Is(err, failure.Budget) {
		t.Errorf("append over MaxRecordBytes: %v, want Budget", err)
	}
	if got, err := s.LoadSession(ctx, "s"); err != nil || got.Revision != 1 || len(got.History) != 0 {
		t.Errorf("the session after a refused append: %+v, %v", got, err)
	}
	def, err := store.OpenAgent(ctx, b, store.AgentConfig{Name: "limits_default"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := def.PutSession(ctx, &agent.SessionRecord{ID: strings.Repeat("x", 2000)}, 0); !errors.Is(err, failure.InvalidArgs) {
		t.Errorf("a 2,000-byte session id: %v, want InvalidArgs", err)
	}
	var full error
	for i := 0; i < 200 && full == nil; i++ {
		_, full = s.PutSession(ctx, &agent.SessionRecord{ID: fmt.Sprint("fill", i), History: []llm.Message{{Text: strings.Repeat("y", 700)}}}, 0)
	}
	if !errors.Is(full, failure.Budget) {
		t.Errorf("filling a 64 KiB bucket: %v, want Budget", full)
	}
}
