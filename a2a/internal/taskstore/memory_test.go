package taskstore

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
)

// TestMemoryTaskTTL: a task not written for longer than the TTL is gone:
// not found, not listed, not updatable (the JetStream store's is
// bus/store's TestTaskTTL).
func TestMemoryTaskTTL(t *testing.T) {
	const ttl = time.Hour
	var offset atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	s := NewMemory(MemoryConfig{Owner: testOwner, Now: clock, TTL: ttl})
	ctx := as("alice")
	now := time.Now()
	if _, err := s.Create(ctx, task("old", now)); err != nil {
		t.Fatal(err)
	}
	offset.Store(int64(ttl / 2))
	if _, err := s.Create(ctx, task("young", now)); err != nil {
		t.Fatal(err)
	}
	offset.Store(int64(ttl + ttl/4)) // old is past its TTL, young is not
	if _, err := s.Get(ctx, "young"); err != nil {
		t.Fatalf("a task within its TTL: %v", err)
	}
	r, err := s.List(ctx, &a2ago.ListTasksRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range r.Tasks {
		if tk.ID == "old" {
			t.Fatal("an expired task is listed")
		}
	}
	if _, err := s.Get(ctx, "old"); !errors.Is(err, a2ago.ErrTaskNotFound) {
		t.Fatalf("an expired task: %v, want ErrTaskNotFound", err)
	}
	if _, err := s.Update(ctx, &taskstore.UpdateRequest{Task: task("old", now)}); !errors.Is(err, a2ago.ErrTaskNotFound) {
		t.Fatalf("update of an expired task: %v", err)
	}
}
