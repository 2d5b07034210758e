package taskstore

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"
	"go.uber.org/goleak"

	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/store"
)

// TestMain checks for leaked goroutines, but for the one Go's fuzzing
// engine leaves blocked on its pipe when it stops (internal/fuzz's
// contextReader.Read, which says so): under load it is still there when a
// fuzz worker or the coordinator exits, and goleak then failed
// FuzzDecodePageToken with no failing input.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("internal/fuzz.(*contextReader).Read.func1"))
}

type ownerKey struct{}

func as(user string) context.Context {
	return context.WithValue(context.Background(), ownerKey{}, user)
}

func testOwner(ctx context.Context) string { s, _ := ctx.Value(ownerKey{}).(string); return s }

func task(id string, at time.Time) *a2ago.Task {
	return &a2ago.Task{ID: a2ago.TaskID(id), ContextID: "ctx-" + id,
		Status:    a2ago.TaskStatus{State: a2ago.TaskStateWorking, Timestamp: &at},
		Artifacts: []*a2ago.Artifact{{ID: "a1", Parts: a2ago.ContentParts{a2ago.NewTextPart("x")}}},
		History:   []*a2ago.Message{a2ago.NewMessage(a2ago.MessageRoleUser, a2ago.NewTextPart("q"))}}
}

// stores returns each store implementation, fresh: in memory, and the
// JetStream one of bus/store over a real bucket.
func stores(t *testing.T) map[string]taskstore.Store {
	b, err := bus.New(context.Background(), bus.Config{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	ks, err := store.OpenTasks(context.Background(), b, store.TasksConfig{Name: "tasks_" + fmt.Sprint(time.Now().UnixNano()), Owner: testOwner})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]taskstore.Store{"memory": NewMemory(MemoryConfig{Owner: testOwner}), "kv": ks.Store}
}

func TestStores(t *testing.T) {
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			ctx := as("alice")
			now := time.Now().UTC()
			v1, err := s.Create(ctx, task("t1", now))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Create(ctx, task("t1", now)); !errors.Is(err, taskstore.ErrTaskAlreadyExists) {
				t.Fatalf("duplicate create: %v", err)
			}
			got, err := s.Get(ctx, "t1")
			if err != nil || got.Version != v1 || got.Task.ContextID != "ctx-t1" {
				t.Fatalf("get = %+v, %v", got, err)
			}
			// A reader's mutation must not reach the store.
			got.Task.Artifacts[0].Parts = append(got.Task.Artifacts[0].Parts, a2ago.NewTextPart("y"))
			again, _ := s.Get(ctx, "t1")
			if len(again.Task.Artifacts[0].Parts) != 1 {
				t.Fatal("a reader's mutation leaked into the store")
			}
			t.Run("owner scoping", func(t *testing.T) {
				if _, err := s.Get(as("bob"), "t1"); !errors.Is(err, a2ago.ErrTaskNotFound) {
					t.Fatalf("bob: %v", err)
				}
				up := task("t1", now)
				if _, err := s.Update(as("bob"), &taskstore.UpdateRequest{Task: up, PrevVersion: v1}); !errors.Is(err, a2ago.ErrTaskNotFound) {
					t.Fatalf("bob update: %v", err)
				}
			})
			t.Run("optimistic concurrency", func(t *testing.T) {
				up := task("t1", now.Add(time.Second))
				up.Status.State = a2ago.TaskStateCompleted
				v2, err := s.Update(ctx, &taskstore.UpdateRequest{Task: up, PrevVersion: v1})
				if err != nil || !v2.After(v1) {
					t.Fatalf("update: %v %v", v2, err)
				}
				if _, err := s.Update(ctx, &taskstore.UpdateRequest{Task: up, PrevVersion: v1}); !errors.Is(err, taskstore.ErrConcurrentModification) {
					t.Fatalf("stale update: %v", err)
				}
				if _, err := s.Update(ctx, &taskstore.UpdateRequest{Task: task("zz", now)}); !errors.Is(err, a2ago.ErrTaskNotFound) {
					t.Fatalf("update of a missing task: %v", err)
				}
			})
			t.Run("list", func(t *testing.T) {
				for i := 2; i <= 5; i++ {
					if _, err := s.Create(ctx, task(fmt.Sprintf("t%d", i), now.Add(time.Duration(i)*time.Second))); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := s.Create(as("bob"), task("b1", now)); err != nil {
					t.Fatal(err)
				}
				var seen []string
				tok := ""
				for page := 0; page < 5; page++ {
					zero := 0
					r, err := s.List(ctx, &a2ago.ListTasksRequest{PageSize: 2, PageToken: tok, HistoryLength: &zero})
					if err != nil {
						t.Fatal(err)
					}
					if r.TotalSize != 5 {
						t.Fatalf("total = %d", r.TotalSize)
					}
					for _, tk := range r.Tasks {
						seen = append(seen, string(tk.ID))
						if tk.Artifacts != nil || len(tk.History) != 0 {
							t.Fatalf("artifacts or history listed: %+v", tk)
						}
					}
					tok = r.NextPageToken
					if tok == "" {
						break
					}
				}
				want := "[t5 t4 t3 t2 t1]"
				if fmt.Sprint(seen) != want {
					t.Fatalf("pages = %v, want %s", seen, want)
				}
				r, _ := s.List(ctx, &a2ago.ListTasksRequest{Status: a2ago.TaskStateCompleted, IncludeArtifacts: true})
				if len(r.Tasks) != 1 || r.Tasks[0].ID != "t1" || len(r.Tasks[0].Artifacts) != 1 {
					t.Fatalf("filtered list = %+v", r.Tasks)
				}
				if _, err := s.List(ctx, &a2ago.ListTasksRequest{PageToken: "garbage!"}); !errors.Is(err, a2ago.ErrInvalidParams) {
					t.Fatalf("bad token: %v", err)
				}
				if _, err := s.List(ctx, &a2ago.ListTasksRequest{PageSize: 101}); !errors.Is(err, a2ago.ErrInvalidParams) {
					t.Fatalf("bad page size: %v", err)
				}
			})
		})
	}
}

func TestKVRejectsUnstorableIDs(t *testing.T) {
	s := stores(t)["kv"]
	if _, err := s.Get(as("a"), "../../etc"); !errors.Is(err, a2ago.ErrTaskNotFound) {
		t.Fatal(err)
	}
	if _, err := s.Create(as("a"), task("a b", time.Now())); !errors.Is(err, a2ago.ErrInvalidParams) {
		t.Fatal(err)
	}
}
