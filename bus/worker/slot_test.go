package worker

import (
	"strings"
	"testing"
)

// TestSlotTake: the first run to take a slot is named after the worker
// (with the revision a resume of it must find); the same run again (a
// retried resume) too; a run nested in its calls is not named; once
// released, the slot names the next run.
func TestSlotTake(t *testing.T) {
	s := newSlot("pool", "w1")
	s.expect("run_a", 7)
	for _, tc := range []struct {
		run        string
		wantNamed  bool
		wantExpect uint64
	}{
		{"run_a", true, 7},
		{"run_a", true, 7}, // the same run again (a retried resume)
		{"run_nested", false, 0},
	} {
		owner, expect := s.take(tc.run)
		pool, worker, ok := ownerOf(owner)
		if named := owner != ""; named != tc.wantNamed || expect != tc.wantExpect ||
			named && (!ok || pool != "pool" || worker != "w1" || !strings.HasPrefix(owner, "worker:pool:w1:own_")) {
			t.Errorf("take(%s) = %q, %d; want named %v, expect %d", tc.run, owner, expect, tc.wantNamed, tc.wantExpect)
		}
	}
	if s.taken() != "run_a" {
		t.Errorf("slot run %q", s.taken())
	}
	a1, _ := s.take("run_a")
	a2, _ := s.take("run_a")
	if a1 == a2 {
		t.Errorf("two attempts share the owner %q", a1)
	}
	s.release()
	if owner, _ := s.take("run_b"); !strings.HasPrefix(owner, "worker:pool:w1:") || s.taken() != "run_b" {
		t.Errorf("after release: %q, slot %q", owner, s.taken())
	}
}

func TestOwnerOf(t *testing.T) {
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
		pool, worker, ok := ownerOf(tc.owner)
		if pool != tc.pool || worker != tc.worker || ok != tc.ok {
			t.Errorf("ownerOf(%q) = %q, %q, %v", tc.owner, pool, worker, ok)
		}
	}
}

// FuzzOwnerOf: ownerOf never panics, and what it accepts names tokens the
// owner a slot of that worker names carries back.
func FuzzOwnerOf(f *testing.F) {
	for _, s := range []string{"worker:pool:w1:own_1", "own_1", "worker:", "worker:::", "worker:a:b:c:d", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, owner string) {
		pool, worker, ok := ownerOf(owner)
		if !ok {
			return
		}
		if pool == "" || worker == "" || strings.Contains(pool, ":") || strings.Contains(worker, ":") {
			t.Fatalf("ownerOf(%q) = %q, %q", owner, pool, worker)
		}
		again, _ := newSlot(pool, worker).take("r")
		if p2, w2, ok2 := ownerOf(again); !ok2 || p2 != pool || w2 != worker {
			t.Fatalf("take→ownerOf of %q: %q, %q, %v", owner, p2, w2, ok2)
		}
	})
}
