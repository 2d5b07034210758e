package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/push"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
)

// countingKV is a real JetStream bucket that counts what the stores read
// of it: entries got one by one, key listings, and the entries of a
// watcher the reader looked at.
type countingKV struct {
	jetstream.KeyValue
	gets, keys, watched atomic.Int64
}

func (c *countingKV) Get(ctx context.Context, key string) (jetstream.KeyValueEntry, error) {
	c.gets.Add(1)
	return c.KeyValue.Get(ctx, key)
}

func (c *countingKV) Keys(ctx context.Context, opts ...jetstream.WatchOpt) ([]string, error) {
	c.keys.Add(1)
	return c.KeyValue.Keys(ctx, opts...)
}

func (c *countingKV) WatchAll(ctx context.Context, opts ...jetstream.WatchOpt) (jetstream.KeyWatcher, error) {
	w, err := c.KeyValue.WatchAll(ctx, opts...)
	if err != nil {
		return nil, err
	}
	cw := &countingWatcher{KeyWatcher: w, out: make(chan jetstream.KeyValueEntry), n: &c.watched}
	go cw.forward()
	return cw, nil
}

// countingWatcher hands on a watcher's entries, each counted when the
// reader first looks at it (its Key): what a stopped scan drains unread is
// not counted.
type countingWatcher struct {
	jetstream.KeyWatcher
	out chan jetstream.KeyValueEntry
	n   *atomic.Int64
}

func (w *countingWatcher) forward() {
	defer close(w.out)
	for e := range w.KeyWatcher.Updates() {
		if e != nil {
			e = &countingEntry{KeyValueEntry: e, n: w.n}
		}
		w.out <- e
	}
}

func (w *countingWatcher) Updates() <-chan jetstream.KeyValueEntry { return w.out }

type countingEntry struct {
	jetstream.KeyValueEntry
	n    *atomic.Int64
	once sync.Once
}

func (e *countingEntry) Key() string {
	e.once.Do(func() { e.n.Add(1) })
	return e.KeyValueEntry.Key()
}

// reads is everything a store read of the bucket so far.
func (c *countingKV) reads() int64 { return c.gets.Load() + c.watched.Load() }

// TestKVListBoundedScan: one List call reads at most ScanCap entries of
// the bucket (entries, not round trips per key), a page token resumes
// the scan where it stopped, and every task is listed exactly once. The
// push configs sharing the bucket are skipped.
func TestKVListBoundedScan(t *testing.T) {
	raw, _ := newTestBucket(t)
	kv := &countingKV{KeyValue: raw}
	const tasks, scanCap = 25, 10
	s, err := newTasks(tasksConfig{KV: kv, Owner: testOwner, ScanCap: scanCap, Skip: pushPrefix})
	if err != nil {
		t.Fatal(err)
	}
	ctx := as("alice")
	base := time.Now().UTC()
	for i := range tasks {
		if _, err := s.Create(ctx, task(fmt.Sprintf("t%02d", i), base.Add(time.Duration(i)*time.Second))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.Put(ctx, pushPrefix+"t00", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		pageSize int
	}{{"pages smaller than a window", 4}, {"pages bigger than a window", 100}} {
		t.Run(tc.name, func(t *testing.T) {
			seen := map[a2ago.TaskID]int{}
			tok, calls := "", 0
			for {
				calls++
				if calls > 30 {
					t.Fatal("the listing did not end")
				}
				before := kv.reads()
				r, err := s.List(ctx, &a2ago.ListTasksRequest{PageSize: tc.pageSize, PageToken: tok})
				if err != nil {
					t.Fatal(err)
				}
				if n := kv.reads() - before; n > scanCap {
					t.Fatalf("one List call read %d entries of the bucket, cap %d", n, scanCap)
				}
				for i, tk := range r.Tasks {
					seen[tk.ID]++
					if i > 0 && r.Tasks[i-1].Status.Timestamp.Before(*tk.Status.Timestamp) {
						t.Fatalf("page not sorted newest first: %s before %s", r.Tasks[i-1].ID, tk.ID)
					}
				}
				if tok = r.NextPageToken; tok == "" {
					break
				}
			}
			if kv.keys.Load() != 0 {
				t.Fatalf("List listed every key of the bucket %d times", kv.keys.Load())
			}
			if len(seen) != tasks {
				t.Fatalf("listed %d distinct tasks, want %d", len(seen), tasks)
			}
			for id, n := range seen {
				if n != 1 {
					t.Fatalf("task %s listed %d times", id, n)
				}
			}
		})
	}
	t.Run("a bucket within the cap is listed exactly", func(t *testing.T) {
		// Below the cap the whole bucket is one window: sorted across pages.
		s, _ := newTasks(tasksConfig{KV: kv, Owner: testOwner, ScanCap: 1000, Skip: pushPrefix})
		var ids []a2ago.TaskID
		tok := ""
		for {
			r, err := s.List(ctx, &a2ago.ListTasksRequest{PageSize: 7, PageToken: tok})
			if err != nil {
				t.Fatal(err)
			}
			for _, tk := range r.Tasks {
				ids = append(ids, tk.ID)
			}
			if r.TotalSize != tasks {
				t.Fatalf("total = %d, want %d", r.TotalSize, tasks)
			}
			if tok = r.NextPageToken; tok == "" {
				break
			}
		}
		if len(ids) != tasks || ids[0] != "t24" || ids[tasks-1] != "t00" {
			t.Fatalf("listed %v", ids)
		}
	})
}

// TestTaskTTL: a task not written for longer than the TTL is gone: not
// found, not listed, not updatable, and its key is deleted (the memory
// store's is TestMemoryTaskTTL in a2a/internal/taskstore).
func TestTaskTTL(t *testing.T) {
	const ttl = time.Hour
	var offset atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	raw, _ := newTestBucket(t)
	kv, err := newTasks(tasksConfig{KV: raw, Owner: testOwner, Now: clock, TTL: ttl, Skip: pushPrefix})
	if err != nil {
		t.Fatal(err)
	}
	forever, err := newTasks(tasksConfig{KV: raw, Owner: testOwner, Now: clock, TTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		s     taskstore.Store
		check func(t *testing.T, id string)
	}{
		{"kv", kv, func(t *testing.T, id string) {
			for _, k := range []string{id, pushPrefix + id} {
				if _, err := raw.Get(context.Background(), k); !errors.Is(err, jetstream.ErrKeyNotFound) {
					t.Fatalf("the expired task's key %s is still in the bucket: %v", k, err)
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			offset.Store(0)
			ctx := as("alice")
			now := time.Now()
			if _, err := tc.s.Create(ctx, task("old-"+tc.name, now)); err != nil {
				t.Fatal(err)
			}
			// The task's push configs, sharing the bucket, go with it.
			if _, err := raw.Put(ctx, pushPrefix+"old-"+tc.name, []byte(`{}`)); err != nil {
				t.Fatal(err)
			}
			offset.Store(int64(ttl / 2))
			if _, err := tc.s.Create(ctx, task("young-"+tc.name, now)); err != nil {
				t.Fatal(err)
			}
			offset.Store(int64(ttl + ttl/4)) // old is past its TTL, young is not
			if _, err := tc.s.Get(ctx, a2ago.TaskID("young-"+tc.name)); err != nil {
				t.Fatalf("a task within its TTL: %v", err)
			}
			r, err := tc.s.List(ctx, &a2ago.ListTasksRequest{})
			if err != nil {
				t.Fatal(err)
			}
			for _, tk := range r.Tasks {
				if tk.ID == a2ago.TaskID("old-"+tc.name) {
					t.Fatal("an expired task is listed")
				}
			}
			if _, err := tc.s.Get(ctx, a2ago.TaskID("old-"+tc.name)); !errors.Is(err, a2ago.ErrTaskNotFound) {
				t.Fatalf("an expired task: %v, want ErrTaskNotFound", err)
			}
			if _, err := tc.s.Update(ctx, &taskstore.UpdateRequest{Task: task("old-"+tc.name, now)}); !errors.Is(err, a2ago.ErrTaskNotFound) {
				t.Fatalf("update of an expired task: %v", err)
			}
			if tc.check != nil {
				tc.check(t, "old-"+tc.name)
			}
		})
	}
	t.Run("negative TTL keeps tasks", func(t *testing.T) {
		offset.Store(0)
		if _, err := forever.Create(as("alice"), task("kept", time.Now())); err != nil {
			t.Fatal(err)
		}
		offset.Store(int64(1000 * time.Hour))
		if _, err := forever.Get(as("alice"), "kept"); err != nil {
			t.Fatal(err)
		}
	})
}

// countingPolicy is a real policy that records the keys it ran
// operations for.
type countingPolicy struct {
	failure.Policy
	mu   sync.Mutex
	keys map[failure.Key]int
}

func (p *countingPolicy) Execute(ctx context.Context, key failure.Key, op func(context.Context) error) error {
	p.mu.Lock()
	p.keys[key]++
	p.mu.Unlock()
	return p.Policy.Execute(ctx, key, op)
}

func (p *countingPolicy) count(k failure.Key) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.keys[k]
}

// TestPushConfigsUsePolicy: every push config operation on the bucket
// runs through the one failure policy under the bucket's key, and a
// bucket that fails gives a typed *failure.Error naming it; an open
// circuit stops the push config operations too.
func TestPushConfigsUsePolicy(t *testing.T) {
	raw, js := newTestBucket(t)
	pol := &countingPolicy{Policy: testkit.FastPolicy(failure.PolicyConfig{BreakerFailures: 2}), keys: map[failure.Key]int{}}
	name := raw.Bucket()
	key := failure.Key{Source: failure.SourceBus, Name: name}
	ps, err := newPushConfigs(tasksConfig{KV: raw, Name: name, Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ops := []struct {
		name string
		run  func() error
	}{
		{"save", func() error {
			_, err := ps.Save(ctx, "t1", &a2ago.PushConfig{ID: "c", URL: "https://hooks.example/"})
			return err
		}},
		{"get", func() error { _, err := ps.Get(ctx, "t1", "c"); return err }},
		{"list", func() error { _, err := ps.List(ctx, "t1"); return err }},
		{"delete", func() error { return ps.Delete(ctx, "t1", "c") }},
		{"delete all", func() error { return ps.DeleteAll(ctx, "t1") }},
	}
	for _, op := range ops {
		before := pol.count(key)
		if err := op.run(); err != nil {
			t.Fatalf("%s: %v", op.name, err)
		}
		if pol.count(key) == before {
			t.Fatalf("%s did not run through the policy", op.name)
		}
	}
	if _, err := ps.Get(ctx, "t1", "c"); !errors.Is(err, push.ErrPushConfigNotFound) {
		t.Fatalf("a missing config: %v", err)
	}
	if err := js.DeleteKeyValue(ctx, name); err != nil {
		t.Fatal(err)
	}
	for _, op := range ops {
		err := op.run()
		var fe *failure.Error
		if !errors.As(err, &fe) || fe.Source != failure.SourceBus || (fe.Name != name && fe.Kind != failure.Unavailable) {
			t.Fatalf("%s on a deleted bucket: %T %v, want a *failure.Error of the bucket", op.name, err, err)
		}
	}
	if pol.Available(key) {
		t.Fatal("the bucket's circuit is still closed after its push config operations kept failing")
	}
}

// TestKVListBucketWithHistory: in a bucket that keeps several revisions
// per key, a scan resumed at a revision also meets superseded revisions;
// each task is still listed once, in its last state, and one call reads at
// most twice ScanCap entries (the window, then each of its tasks).
func TestKVListBucketWithHistory(t *testing.T) {
	_, js := newTestBucket(t)
	raw, err := js.CreateKeyValue(context.Background(), jetstream.KeyValueConfig{Bucket: "hist_" + fmt.Sprint(time.Now().UnixNano()), History: 5})
	if err != nil {
		t.Fatal(err)
	}
	kv := &countingKV{KeyValue: raw}
	const tasks, scanCap = 12, 5
	s, err := newTasks(tasksConfig{KV: kv, Owner: testOwner, ScanCap: scanCap})
	if err != nil {
		t.Fatal(err)
	}
	ctx := as("alice")
	base := time.Now().UTC()
	versions := map[a2ago.TaskID]taskstore.TaskVersion{}
	for i := range tasks {
		tk := task(fmt.Sprintf("h%02d", i), base.Add(time.Duration(i)*time.Second))
		v, err := s.Create(ctx, tk)
		if err != nil {
			t.Fatal(err)
		}
		versions[tk.ID] = v
	}
	// Rewrite every other task: their earlier revisions stay in the stream.
	for i := 0; i < tasks; i += 2 {
		tk := task(fmt.Sprintf("h%02d", i), base.Add(time.Duration(i)*time.Second))
		tk.Status.State = a2ago.TaskStateCompleted
		v, err := s.Update(ctx, &taskstore.UpdateRequest{Task: tk, PrevVersion: versions[tk.ID]})
		if err != nil {
			t.Fatal(err)
		}
		versions[tk.ID] = v
	}
	seen := map[a2ago.TaskID]int{}
	tok := ""
	for calls := 0; ; calls++ {
		if calls > 20 {
			t.Fatal("the listing did not end")
		}
		before := kv.reads()
		r, err := s.List(ctx, &a2ago.ListTasksRequest{PageSize: 100, PageToken: tok})
		if err != nil {
			t.Fatal(err)
		}
		if n := kv.reads() - before; n > 2*scanCap {
			t.Fatalf("one List call read %d entries, cap 2x%d", n, scanCap)
		}
		for _, tk := range r.Tasks {
			seen[tk.ID]++
			var i int
			fmt.Sscanf(string(tk.ID), "h%d", &i)
			if want := i%2 == 0; want != (tk.Status.State == a2ago.TaskStateCompleted) {
				t.Fatalf("task %s listed in a superseded state %s", tk.ID, tk.Status.State)
			}
		}
		if tok = r.NextPageToken; tok == "" {
			break
		}
	}
	if len(seen) != tasks {
		t.Fatalf("listed %d distinct tasks, want %d: %v", len(seen), tasks, seen)
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("task %s listed %d times", id, n)
		}
	}
}
