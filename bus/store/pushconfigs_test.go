package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/push"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/switchboard-dev/switchboard/bus"
)

// pushStores returns a push config store over a fresh bus bucket, and a
// second one over the same bucket (another replica).
func pushStores(t *testing.T) (push.ConfigStore, push.ConfigStore) {
	b, err := bus.New(context.Background(), bus.Config{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	kv, err := b.JetStream().CreateKeyValue(context.Background(), jetstream.KeyValueConfig{Bucket: "push_" + fmt.Sprint(time.Now().UnixNano())})
	if err != nil {
		t.Fatal(err)
	}
	a, err := newPushConfigs(tasksConfig{KV: kv})
	if err != nil {
		t.Fatal(err)
	}
	c, err := newPushConfigs(tasksConfig{KV: kv})
	if err != nil {
		t.Fatal(err)
	}
	return a, c
}

func TestPushConfigs(t *testing.T) {
	ctx := context.Background()
	a, b := pushStores(t)
	saved, err := a.Save(ctx, "t1", &a2ago.PushConfig{URL: "https://hooks.example/a", Token: "tok"})
	if err != nil || saved.ID == "" || saved.TaskID != "t1" {
		t.Fatalf("save = %+v, %v", saved, err)
	}
	if _, err := a.Save(ctx, "t1", &a2ago.PushConfig{ID: "fixed", URL: "https://hooks.example/b"}); err != nil {
		t.Fatal(err)
	}
	// The other replica sees both.
	l, err := b.List(ctx, "t1")
	if err != nil || len(l) != 2 {
		t.Fatalf("list on the other replica = %v, %v", l, err)
	}
	g, err := b.Get(ctx, "t1", saved.ID)
	if err != nil || g.URL != "https://hooks.example/a" || g.Token != "tok" {
		t.Fatalf("get = %+v, %v", g, err)
	}
	if _, err := b.Get(ctx, "t1", "nope"); !errors.Is(err, push.ErrPushConfigNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
	if err := b.Delete(ctx, "t1", "fixed"); err != nil {
		t.Fatal(err)
	}
	if l, _ := a.List(ctx, "t1"); len(l) != 1 || l[0].ID != saved.ID {
		t.Fatalf("after delete: %v", l)
	}
	if err := a.DeleteAll(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	if l, _ := b.List(ctx, "t1"); len(l) != 0 {
		t.Fatalf("after delete all: %v", l)
	}
	// Unknown tasks have none; deleting what is not there is no error.
	if l, err := a.List(ctx, "none"); err != nil || len(l) != 0 {
		t.Fatalf("unknown task: %v, %v", l, err)
	}
	if err := a.Delete(ctx, "none", "x"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []*a2ago.PushConfig{nil, {}, {URL: "not a url"}} {
		if _, err := a.Save(ctx, "t1", bad); !errors.Is(err, a2ago.ErrInvalidParams) {
			t.Errorf("save %+v: %v, want ErrInvalidParams", bad, err)
		}
	}
	if _, err := a.Save(ctx, "bad id/with slash", &a2ago.PushConfig{URL: "https://x"}); !errors.Is(err, a2ago.ErrInvalidParams) {
		t.Errorf("unstorable task id: %v", err)
	}
}

// TestPushConfigsConcurrentWriters: two replicas adding configs to one
// task at once lose none of them.
func TestPushConfigsConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	a, b := pushStores(t)
	var wg sync.WaitGroup
	for i := range 10 {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.Save(ctx, "t", &a2ago.PushConfig{ID: fmt.Sprint("c", i), URL: "https://hooks.example/"}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if l, err := a.List(ctx, "t"); err != nil || len(l) != 10 {
		t.Fatalf("%d configs after 10 concurrent saves (%v)", len(l), err)
	}
}

func FuzzDecodePushConfigs(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":{"id":"a","url":"https://x"}}`, `{"a":{"id":"b","url":"https://x"}}`, `{"a":null}`, `[]`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decodePushConfigs(data)
		if err != nil {
			return
		}
		for id, c := range m {
			if c == nil || c.ID != id || c.URL == "" {
				t.Fatalf("accepted %q: entry %q", data, id)
			}
		}
	})
}
