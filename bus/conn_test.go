package bus_test

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/task"
	"github.com/switchboard-dev/switchboard/failure"
)

// TestLostConnection: when the server goes away, requests and publishes
// fail with typed failures within their deadline, and the loss is reported
// through the policy.
func TestLostConnection(t *testing.T) {
	host := newBus(t, bus.Config{Listen: "127.0.0.1:0"})
	pol := &countingPolicy{Policy: failure.NewPolicy(failure.PolicyConfig{InitialBackoff: 10 * time.Millisecond})}
	client := newBus(t, bus.Config{URLs: []string{host.ClientURL()}, ReconnectWait: 50 * time.Millisecond, Policy: pol})
	ctx := ctxT(t, 20*time.Second)
	if err := host.Close(); err != nil {
		t.Fatal(err)
	}
	// Wait for the client to notice.
	for client.Conn().IsConnected() {
		if ctx.Err() != nil {
			t.Fatal("client never noticed the server was gone")
		}
		time.Sleep(10 * time.Millisecond)
	}
	rctx := ctxT(t, 500*time.Millisecond)
	_, err := client.Sampler().Sample(rctx, samplingRequest("x"))
	t.Logf("sample while disconnected: %v", err)
	wantKind(t, err, failure.Transient)
	pctx := ctxT(t, 500*time.Millisecond)
	err = client.PublishTask(pctx, task.Update{Task: "t1", State: "working"})
	t.Logf("publish task while disconnected: %v", err)
	wantKind(t, err, failure.Transient)
	reported := false
	for _, m := range pol.messages() {
		if strings.Contains(m, "connection was lost") {
			reported = true
		}
	}
	if !reported {
		t.Errorf("the lost connection was not reported; handled: %v", pol.messages())
	}
}
