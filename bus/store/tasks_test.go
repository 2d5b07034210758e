package store

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/internal/a2atask"
)

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

// newBucket makes a fresh JetStream key-value bucket on an embedded bus.
func newTestBucket(t *testing.T) (jetstream.KeyValue, jetstream.JetStream) {
	b, err := bus.New(context.Background(), bus.Config{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	kv, err := b.JetStream().CreateKeyValue(context.Background(), jetstream.KeyValueConfig{Bucket: "tasks_" + fmt.Sprint(time.Now().UnixNano())})
	if err != nil {
		t.Fatal(err)
	}
	return kv, b.JetStream()
}

func FuzzDecodeRecord(f *testing.F) {
	b, _ := json.Marshal(a2atask.Record{Task: task("t1", time.Unix(5, 0)), User: "u"})
	f.Add(b)
	f.Add([]byte(`{"task":null}`))
	f.Add([]byte(`{"task":{"id":"x","contextId":"c","status":{"state":"bogus"}}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := decodeRecord(data)
		if err == nil && (r == nil || r.Task == nil || r.Task.ID == "" || r.Task.ContextID == "") {
			t.Fatal("accepted an incomplete record")
		}
	})
}
