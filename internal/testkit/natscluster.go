package testkit

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/failure"
)

// FreePorts reserves n loopback ports for the cluster listeners (the routes
// must name every node before any starts).
func FreePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var ls []net.Listener
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// StartCluster starts three nats-servers clustered over loopback routes,
// JetStream on, each with its own store directory.
func StartCluster(t *testing.T) []*server.Server {
	t.Helper()
	routePorts := FreePorts(t, 3)
	var routes []string
	for _, p := range routePorts {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	var nodes []*server.Server
	for i := 0; i < 3; i++ {
		opts := &server.Options{
			ServerName: fmt.Sprintf("node-%d", i), Host: "127.0.0.1", Port: server.RANDOM_PORT,
			JetStream: true, StoreDir: t.TempDir(), NoSigs: true, NoLog: true,
			Cluster: server.ClusterOpts{Name: "switchboard-test", Host: "127.0.0.1", Port: routePorts[i]},
			Routes:  server.RoutesFromStr(fmt.Sprintf("%s,%s,%s", routes[0], routes[1], routes[2])),
		}
		s, err := server.NewServer(opts)
		if err != nil {
			t.Fatal(err)
		}
		s.Start()
		nodes = append(nodes, s)
		t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	}
	for _, s := range nodes {
		if !s.ReadyForConnections(10 * time.Second) {
			t.Fatalf("%s not ready", s.Name())
		}
	}
	// Wait for the JetStream meta group to elect a leader.
	WaitFor(t, 30*time.Second, "a JetStream meta leader", func() bool {
		for _, s := range nodes {
			if s.JetStreamIsLeader() {
				return true
			}
		}
		return false
	})
	return nodes
}

// ConnectCluster opens a bus on the cluster, first through node i, retrying while
// the JetStream meta group elects its leader.
func ConnectCluster(t *testing.T, ctx context.Context, nodes []*server.Server, i int) *bus.Bus {
	t.Helper()
	urls := []string{nodes[i].ClientURL()}
	for j, n := range nodes {
		if j != i {
			urls = append(urls, n.ClientURL())
		}
	}
	var b *bus.Bus
	var err error
	WaitFor(t, 30*time.Second, fmt.Sprintf("a bus through node %d", i), func() bool {
		b, err = bus.New(ctx, bus.Config{URLs: urls, InOrder: true, ReconnectWait: 100 * time.Millisecond,
			Stream: bus.StreamConfig{Replicas: 3, MaxAge: time.Hour},
			Policy: failure.NewPolicy(failure.PolicyConfig{InitialBackoff: 50 * time.Millisecond, BreakerFailures: 1000})})
		if err != nil && ctx.Err() != nil {
			t.Fatalf("connecting through node %d: %v", i, err)
		}
		return err == nil
	})
	t.Cleanup(func() { b.Close() })
	return b
}
