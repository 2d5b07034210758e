package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
)

// FuzzResumeCheckpoint resumes a run from an arbitrary stored checkpoint
// (a shared store holds what any process, of any version, wrote): the
// resume returns, with an answer or an error, and never panics or hangs.
func FuzzResumeCheckpoint(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "checkpoints", "*.json"))
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, 0)
	}
	f.Add([]byte(`{"v":1,"run":"r","session":"s","agent":"durable","state":"running","messages":[]}`), 0)
	f.Add([]byte(`{"v":1,"run":"r","session":"s","agent":"durable","state":"parked","questions":["q"],"messages":[{"role":"user","text":"go"}]}`), 1)
	f.Fuzz(func(t *testing.T, data []byte, base int) {
		var cp agent.Checkpoint
		if json.Unmarshal(data, &cp) != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		st := agent.NewMemoryStore(agent.MemoryStoreOptions{})
		cp.Run, cp.Session = "r", "s"
		rec := &agent.SessionRecord{ID: "s", Run: "r"}
		for range base % 4 {
			rec.History = append(rec.History, cp.Messages...)
		}
		if _, err := st.PutSession(ctx, rec, 0); err != nil {
			return
		}
		if _, err := st.SaveCheckpoint(ctx, &cp, 0); err != nil {
			return
		}
		a := durableAgent(t, st, fourTurns(), newLedger(), nil, agent.Durability{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = a.Resume(ctx, "r")
		}()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Fatal("the resume hung")
		}
	})
}
