package bus_test

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/task"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
)

// TestLostConnection: when the server goes away, requests and publishes
// fail with typed failures within their deadline, and the loss is reported
// through the policy.
func TestLostConnection(t *testing.T) {
	host := newBus(t, bus.Config{Listen: "127.0.0.1:0"})
	pol := &countingPolicy{Policy: failure.NewPolicy(failure.PolicyConfig{InitialBackoff: 10 * time.Millisecond})}
	client := newBus(t, bus.Config{URLs: []string{host.ClientURL()}, ReconnectWait: 50 * time.Millisecond, Policy: pol})
	if err := host.Close(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 20*time.Second, "the client to notice the server is gone", func() bool { return !client.Conn().IsConnected() })
	// Generous deadlines: a request while disconnected fails at once as
	// transient; one that waited would end with kind timeout instead.
	rctx := ctxT(t, 5*time.Second)
	_, err := client.Sampler().Sample(rctx, samplingRequest("x"))
	t.Logf("sample while disconnected: %v", err)
	wantKind(t, err, failure.Transient)
	pctx := ctxT(t, 5*time.Second)
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
