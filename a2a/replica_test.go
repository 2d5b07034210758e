package a2a

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/store"
)

// shared is the configuration of a replica whose tasks (and push configs)
// are in the shared task bucket on b: each call opens its own stores over
// it, as another process would.
func shared(t *testing.T, b *bus.Bus) ServerConfig {
	t.Helper()
	ts, err := store.OpenTasks(context.Background(), b, store.TasksConfig{Name: "a2a_tasks"})
	if err != nil {
		t.Fatal(err)
	}
	return ServerConfig{Store: ts.Store, PushStore: ts.PushConfigs}
}

// TestReplicasShareTasks: two replicas over one JetStream KV store answer
// for the same tasks, and a restart of the whole deployment (NATS included,
// same store directory) loses no task.
func TestReplicasShareTasks(t *testing.T) {
	ctx := ctxT(t)
	dir := t.TempDir()
	b1, err := bus.New(ctx, bus.Config{StoreDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	_, r1 := newWorker(t, shared(t, b1))
	_, r2 := newWorker(t, shared(t, b1))

	c1 := clientFor(t, r1.URL, a2ago.TransportProtocolJSONRPC, nil)
	c2 := clientFor(t, r2.URL, a2ago.TransportProtocolHTTPJSON, nil)
	var ids []a2ago.TaskID
	for i, c := range []interface {
		SendMessage(context.Context, *a2ago.SendMessageRequest) (a2ago.SendMessageResult, error)
	}{c1, c2, c1} {
		res, err := c.SendMessage(ctx, textMsg("research replica"))
		if err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		ids = append(ids, res.(*a2ago.Task).ID)
	}
	// Each replica sees every task, wherever it ran.
	for _, id := range ids {
		for _, c := range []*httptest.Server{r1, r2} {
			got, err := clientFor(t, c.URL, a2ago.TransportProtocolJSONRPC, nil).GetTask(ctx, &a2ago.GetTaskRequest{ID: id})
			if err != nil || got.Status.State != a2ago.TaskStateCompleted {
				t.Fatalf("replica %s, task %s: %v %v", c.URL, id, got, err)
			}
		}
	}
	l, err := c2.ListTasks(ctx, &a2ago.ListTasksRequest{})
	if err != nil || len(l.Tasks) != 3 {
		t.Fatalf("list on replica 2 = %v, %v", l, err)
	}

	// Restart: replicas and NATS go away; a new NATS on the same directory
	// and a new replica find every task.
	r1.Close()
	r2.Close()
	if err := b1.Close(); err != nil {
		t.Fatal(err)
	}
	b2, err := bus.New(ctx, bus.Config{StoreDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b2.Close() })
	_, r3 := newWorker(t, shared(t, b2))
	c3 := clientFor(t, r3.URL, a2ago.TransportProtocolJSONRPC, nil)
	for _, id := range ids {
		got, err := c3.GetTask(ctx, &a2ago.GetTaskRequest{ID: id})
		if err != nil || got.Status.State != a2ago.TaskStateCompleted || artifactText(got) == "" {
			t.Fatalf("after restart, task %s: %+v %v", id, got, err)
		}
	}
	if _, err := c3.GetTask(ctx, &a2ago.GetTaskRequest{ID: "missing"}); !errors.Is(err, a2ago.ErrTaskNotFound) {
		t.Fatalf("missing task: %v", err)
	}
	// The restarted replica keeps working on the same store.
	if _, err := c3.SendMessage(ctx, textMsg("hello again")); err != nil {
		t.Fatal(err)
	}
	l, _ = c3.ListTasks(ctx, &a2ago.ListTasksRequest{})
	if len(l.Tasks) != 4 {
		t.Fatalf("tasks after restart = %d", len(l.Tasks))
	}
}

// TestReplicasSharePushConfigs: with one task bucket shared (tasks
// and push configs in one bucket), a config a client sets through one
// replica is listed by another, and the task list skips the configs.
func TestReplicasSharePushConfigs(t *testing.T) {
	ctx := ctxT(t)
	b, err := bus.New(ctx, bus.Config{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	_, r1 := newWorker(t, withPush(shared(t, b)))
	_, r2 := newWorker(t, withPush(shared(t, b)))
	c1 := clientFor(t, r1.URL, a2ago.TransportProtocolJSONRPC, nil)
	c2 := clientFor(t, r2.URL, a2ago.TransportProtocolHTTPJSON, nil)
	res, err := c1.SendMessage(ctx, textMsg("research push"))
	if err != nil {
		t.Fatal(err)
	}
	id := res.(*a2ago.Task).ID
	pc, err := c1.CreateTaskPushConfig(ctx, &a2ago.PushConfig{TaskID: id, URL: "https://hooks.example/a2a"})
	if err != nil {
		t.Fatal(err)
	}
	l, err := c2.ListTaskPushConfigs(ctx, &a2ago.ListTaskPushConfigRequest{TaskID: id})
	if err != nil || len(l) != 1 || l[0].ID != pc.ID {
		t.Fatalf("list on the other replica = %+v, %v", l, err)
	}
	// The push configs share the tasks' bucket: listing tasks skips them.
	tl, err := c2.ListTasks(ctx, &a2ago.ListTasksRequest{})
	if err != nil || len(tl.Tasks) != 1 || tl.Tasks[0].ID != id {
		t.Fatalf("tasks beside push configs = %+v, %v", tl, err)
	}
	if _, err := c2.GetTask(ctx, &a2ago.GetTaskRequest{ID: a2ago.TaskID("push." + string(id))}); !errors.Is(err, a2ago.ErrTaskNotFound) {
		t.Fatalf("a push record read as a task: %v", err)
	}
}

func withPush(cfg ServerConfig) ServerConfig { cfg.PushNotifications = true; return cfg }
