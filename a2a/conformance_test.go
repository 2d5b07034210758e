package a2a

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/switchboard-dev/switchboard/internal/testkit"
)

// TestStreamsFanOut covers STREAM-ORDER-002/003/004: every subscriber of a
// task gets the same events in the same order, and closing one stream
// does not affect the others.
func TestStreamsFanOut_STREAM_ORDER_002_003_004(t *testing.T) {
	_, hs := newWorker(t, ServerConfig{})
	ctx := ctxT(t)
	c := clientFor(t, hs.URL, a2ago.TransportProtocolJSONRPC, nil)
	m := textMsg("slow fan-out")
	m.Config = &a2ago.SendMessageConfig{ReturnImmediately: true}
	res, err := c.SendMessage(ctx, m)
	if err != nil {
		t.Fatal(err)
	}
	id := res.(*a2ago.Task).ID
	// Subscribe once the task is quiet (its tool has started), so that
	// every subscriber starts from the same point.
	testkit.WaitFor(t, 20*time.Second, "the task's tool to start", func() bool {
		tk, err := c.GetTask(ctx, &a2ago.GetTaskRequest{ID: id})
		if err != nil {
			t.Fatal(err)
		}
		return strings.Contains(messageText(tk.Status.Message), "slow: started")
	})
	type sub struct {
		states []string
		ready  chan struct{}
	}
	subs := []*sub{{ready: make(chan struct{})}, {ready: make(chan struct{})}, {ready: make(chan struct{})}}
	var wg sync.WaitGroup
	closeCtx, closeEarly := context.WithCancel(ctx)
	for i, s := range subs {
		sctx := ctx
		if i == 2 {
			sctx = closeCtx // this one is closed early
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := true
			for ev, err := range clientFor(t, hs.URL, a2ago.TransportProtocolJSONRPC, nil).SubscribeToTask(sctx, &a2ago.SubscribeToTaskRequest{ID: id}) {
				if first {
					close(s.ready)
					first = false
				}
				if err != nil {
					return
				}
				if st, ok := ev.(*a2ago.TaskStatusUpdateEvent); ok {
					s.states = append(s.states, string(st.Status.State)+":"+messageText(st.Status.Message))
				}
			}
		}()
	}
	for _, s := range subs {
		<-s.ready
	}
	closeEarly()
	if _, err := c.CancelTask(ctx, &a2ago.CancelTaskRequest{ID: id}); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if len(subs[0].states) == 0 || !strings.HasPrefix(subs[0].states[len(subs[0].states)-1], string(a2ago.TaskStateCanceled)) {
		t.Fatalf("subscriber 0 = %v", subs[0].states)
	}
	if !reflect.DeepEqual(subs[0].states, subs[1].states) {
		t.Fatalf("subscribers differ:\n%v\n%v", subs[0].states, subs[1].states)
	}
}

// TestDataModel covers DM-TASK-001, DM-TASK-002, DM-MSG-001, DM-MSG-002,
// DM-ART-001, DM-STATUS-001, DM-SERIAL-001/002/003 on the wire.
func TestDataModel_DM_SERIAL_001_002_003(t *testing.T) {
	_, hs := newWorker(t, ServerConfig{})
	_, out := rawPost(t, hs.URL+jsonrpcPath, map[string]string{"A2A-Version": "1.0"}, rpcSend)
	res, _ := out["result"].(map[string]any)
	task, _ := res["task"].(map[string]any)
	if task == nil {
		t.Fatalf("result = %v", out)
	}
	for _, f := range []string{"id", "contextId", "status"} {
		if _, ok := task[f]; !ok {
			t.Errorf("DM-TASK-001: task lacks %q", f)
		}
	}
	status := task["status"].(map[string]any)
	if status["state"] != "TASK_STATE_COMPLETED" {
		t.Errorf("DM-TASK-002/DM-SERIAL-002: state %v", status["state"])
	}
	ts, _ := status["timestamp"].(string)
	if p, err := time.Parse(time.RFC3339Nano, ts); err != nil || !strings.HasSuffix(ts, "Z") || p.Location() != time.UTC {
		t.Errorf("DM-SERIAL-003: timestamp %q", ts)
	}
	hist, _ := task["history"].([]any)
	if len(hist) == 0 {
		t.Fatal("no history")
	}
	msg := hist[0].(map[string]any)
	for _, f := range []string{"messageId", "role", "parts"} {
		if _, ok := msg[f]; !ok {
			t.Errorf("DM-MSG-001: message lacks %q", f)
		}
	}
	if msg["role"] != "ROLE_USER" {
		t.Errorf("DM-MSG-002: role %v", msg["role"])
	}
	arts, _ := task["artifacts"].([]any)
	if len(arts) != 1 {
		t.Fatalf("artifacts = %v", arts)
	}
	art := arts[0].(map[string]any)
	if _, ok := art["artifactId"]; !ok || art["parts"] == nil {
		t.Errorf("DM-ART-001: artifact %v", art)
	}
	for k := range task {
		if strings.Contains(k, "_") {
			t.Errorf("DM-SERIAL-001: key %q is not camelCase", k)
		}
	}
}
