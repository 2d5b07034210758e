package runowner

import (
	"context"
	"strings"
	"testing"
)

func TestTake(t *testing.T) {
	ctx := context.Background()
	if owner, expect := Take(ctx, "run_a", "own_1"); owner != "own_1" || expect != 0 {
		t.Errorf("without a slot: %q, %d", owner, expect)
	}
	s := NewSlot("pool", "w1")
	s.Expect("run_a", 7)
	ctx = With(ctx, s)
	for _, tc := range []struct {
		run, wantOwner string
		wantExpect     uint64
	}{
		{"run_a", "worker:pool:w1:own_1", 7},
		{"run_a", "worker:pool:w1:own_1", 7}, // the same run again (a retried resume)
		{"run_nested", "own_1", 0},           // a run nested in the first one's calls
	} {
		owner, expect := Take(ctx, tc.run, "own_1")
		if owner != tc.wantOwner || expect != tc.wantExpect {
			t.Errorf("Take(%s) = %q, %d; want %q, %d", tc.run, owner, expect, tc.wantOwner, tc.wantExpect)
		}
	}
	if s.Run() != "run_a" {
		t.Errorf("slot run %q", s.Run())
	}
	s.Release()
	if owner, _ := Take(ctx, "run_b", "own_2"); owner != "worker:pool:w1:own_2" || s.Run() != "run_b" {
		t.Errorf("after Release: %q, slot %q", owner, s.Run())
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		owner, pool, worker string
		ok                  bool
	}{
		{"worker:pool:w1:own_1", "pool", "w1", true},
		{"own_1", "", "", false},
		{"worker:pool:w1", "", "", false},
		{"worker::w1:own_1", "", "", false},
		{"worker:pool:w1:", "", "", false},
		{"worker:pool:w1:own:extra", "pool", "w1", true},
	} {
		pool, worker, ok := Parse(tc.owner)
		if pool != tc.pool || worker != tc.worker || ok != tc.ok {
			t.Errorf("Parse(%q) = %q, %q, %v", tc.owner, pool, worker, ok)
		}
	}
}

// FuzzParse: Parse never panics, and what it accepts names tokens an
// owner made by Take would carry back.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"worker:pool:w1:own_1", "own_1", "worker:", "worker:::", "worker:a:b:c:d", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, owner string) {
		pool, worker, ok := Parse(owner)
		if !ok {
			return
		}
		if pool == "" || worker == "" || strings.Contains(pool, ":") || strings.Contains(worker, ":") {
			t.Fatalf("Parse(%q) = %q, %q", owner, pool, worker)
		}
		_, attempt, _ := strings.Cut(strings.TrimPrefix(owner, "worker:"+pool+":"+worker), ":")
		s := NewSlot(pool, worker)
		again, _ := Take(With(context.Background(), s), "r", attempt)
		if p2, w2, ok2 := Parse(again); !ok2 || p2 != pool || w2 != worker {
			t.Fatalf("Take→Parse of %q: %q, %q, %v", owner, p2, w2, ok2)
		}
	})
}
