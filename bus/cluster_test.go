package bus_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
)

func TestClusterSurvivesNodeLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test skipped in -short mode")
	}
	ctx := ctxT(t, 60*time.Second)
	start := time.Now()
	step := func(what string) { t.Logf("%6.2fs %s", time.Since(start).Seconds(), what) }
	nodes := testkit.StartCluster(t)
	step("cluster started")
	client := testkit.ConnectCluster(t, ctx, nodes, 0)
	respA := testkit.ConnectCluster(t, ctx, nodes, 1)
	respB := testkit.ConnectCluster(t, ctx, nodes, 2)
	step("buses connected")

	var byA, byB atomic.Int64
	serveCounting := func(b *bus.Bus, n *atomic.Int64, name string) {
		_, err := b.ServeSampling(ctx, testkit.SamplerFunc(func(_ context.Context, req agent.SamplingRequest) (agent.SamplingResult, error) {
			n.Add(1)
			return agent.SamplingResult{Model: name, Text: req.Messages[0].Text}, nil
		}), bus.ServeOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	serveCounting(respA, &byA, "A")
	serveCounting(respB, &byB, "B")

	// A replicated KV bucket (JetStream's own, as the stores of bus/store
	// use it) written before the loss.
	kvConfig := jetstream.KeyValueConfig{Bucket: "cluster_tasks", Replicas: 3}
	var kv jetstream.KeyValue
	testkit.WaitFor(t, 30*time.Second, "the KV bucket (its stream leader may still be electing)", func() bool {
		var err error
		kv, err = client.JetStream().CreateOrUpdateKeyValue(ctx, kvConfig)
		if err != nil && ctx.Err() != nil {
			t.Fatal(err)
		}
		return err == nil
	})
	var err error
	testkit.WaitFor(t, 30*time.Second, "the first write", func() bool {
		_, err = kv.Put(ctx, "task.before", []byte("working"))
		return err == nil || ctx.Err() != nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The same bucket, through another node.
	kvA, err := respA.JetStream().KeyValue(ctx, "cluster_tasks")
	if err != nil {
		t.Fatal(err)
	}
	step("kv written")

	ask := func(n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			res, err := client.Sampler().Sample(rctx, samplingRequest(fmt.Sprint(i)))
			cancel()
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			if res.Text != fmt.Sprint(i) {
				t.Fatalf("request %d answered %q", i, res.Text)
			}
		}
	}
	// Wait until both responders' interest reached the client's node.
	for byA.Load() == 0 || byB.Load() == 0 {
		if ctx.Err() != nil {
			t.Fatalf("load never reached both responders: A=%d B=%d", byA.Load(), byB.Load())
		}
		ask(10)
	}

	step("both responders answered")
	// Lose the node responder B is connected to.
	if got := respB.Conn().ConnectedServerName(); got != "node-2" {
		t.Fatalf("responder B is connected to %q, want node-2", got)
	}
	remotes := nodes[0].NumRemotes()
	nodes[2].Shutdown()
	nodes[2].WaitForShutdown()
	// Requests in flight while a node goes away can be lost (their callers
	// time out and retry); the guarantee is about the cluster once the
	// surviving nodes dropped the lost one's routes (and its interest).
	testkit.WaitFor(t, 30*time.Second, "node-0 to notice that node-2 is gone", func() bool { return nodes[0].NumRemotes() < remotes })
	beforeA, beforeB := byA.Load(), byB.Load()
	step("node 2 shut down")
	ask(40)
	step("40 answered after the loss")
	if byA.Load()+byB.Load()-beforeA-beforeB != 40 {
		t.Errorf("after the loss: answered %d, want 40", byA.Load()+byB.Load()-beforeA-beforeB)
	}
	// B reconnects to a surviving node and takes its share again.
	for byB.Load() == beforeB {
		if ctx.Err() != nil {
			t.Fatal("responder B never answered again after reconnecting")
		}
		ask(10)
	}

	step("B answered again")
	if got := respB.Conn().ConnectedServerName(); got == "node-2" || got == "" {
		t.Errorf("responder B is connected to %q after node-2 was lost", got)
	}
	// The value written before the loss is still readable, through another
	// node, once the stream has a leader again (a read in the election
	// finds no responder).
	var e jetstream.KeyValueEntry
	testkit.WaitFor(t, 30*time.Second, "a read after the loss", func() bool {
		gctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		var err error
		e, err = kvA.Get(gctx, "task.before")
		cancel()
		if err == nil {
			return true
		}
		err = respA.Classify(err, "kv get")
		if ctx.Err() != nil || !(errorsIs(err, failure.Unavailable) || errorsIs(err, failure.Transient) || errorsIs(err, failure.Timeout)) {
			t.Fatalf("after the loss: Get: %v", err)
		}
		t.Logf("read after the loss, retrying: %v", err)
		return false
	})
	if string(e.Value()) != "working" {
		t.Fatalf("after the loss: Get = %q", e.Value())
	}
	// And the replicated KV still takes writes with two of three nodes, once
	// it has a leader again (if node-2 led it, the survivors elect one).
	for {
		uctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := kvA.Update(uctx, "task.before", []byte("completed"), e.Revision())
		cancel()
		if err == nil {
			break
		}
		if err = respA.Classify(err, "kv update"); ctx.Err() != nil || errorsIs(err, failure.Conflict) {
			t.Fatalf("update after the loss: %v", err)
		}
		t.Logf("update after the loss, retrying: %v", err)
	}
	step("KV read and updated after the loss")
}
