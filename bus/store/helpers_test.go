package store_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"go.uber.org/goleak"

	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
)

func TestMain(m *testing.M) {
	if os.Getenv(envNATSDir) != "" {
		// Re-executed by natsServerProcess: be a NATS server.
		os.Exit(natsProcess())
	}
	// nats.go v1.55's object store Put makes a JetStream context per call
	// whose reconnect watcher reads its status channel after Put's
	// deferred cleanup may have set it to nil: under load the watcher then
	// blocks forever (jetstream/object.go:693, publish.go:567). The store
	// writes large records with Put; that goroutine is nats.go's, not ours.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/nats-io/nats.go/jetstream.(*jetStream).resetPendingAcksOnReconnect"))
}

var ctxT = testkit.Ctx

// newBus starts a bus on a real embedded server, closed with the test.
func newBus(t testing.TB, cfg bus.Config) *bus.Bus {
	t.Helper()
	if cfg.Policy == nil {
		cfg.Policy = failure.NewPolicy(failure.PolicyConfig{MaxAttempts: 2, InitialBackoff: 10 * time.Millisecond})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := bus.New(ctx, cfg)
	if err != nil {
		t.Fatalf("bus.New: %v", err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return b
}

// freePorts reserves n loopback ports for the cluster listeners (the routes
// must name every node before any starts).
func freePorts(t *testing.T, n int) []int {
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

// startCluster starts three nats-servers clustered over loopback routes,
// JetStream on, each with its own store directory.
func startCluster(t *testing.T) []*server.Server {
	t.Helper()
	routePorts := freePorts(t, 3)
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
	deadline := time.Now().Add(20 * time.Second)
	for {
		for _, s := range nodes {
			if s.JetStreamIsLeader() {
				return nodes
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no JetStream meta leader after 20s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// connect opens a bus on the cluster, first through node i, retrying while
// the JetStream meta group elects its leader.
func connect(t *testing.T, ctx context.Context, nodes []*server.Server, i int) *bus.Bus {
	t.Helper()
	urls := []string{nodes[i].ClientURL()}
	for j, n := range nodes {
		if j != i {
			urls = append(urls, n.ClientURL())
		}
	}
	for {
		b, err := bus.New(ctx, bus.Config{URLs: urls, InOrder: true, ReconnectWait: 100 * time.Millisecond,
			Stream: bus.StreamConfig{Replicas: 3, MaxAge: time.Hour},
			Policy: failure.NewPolicy(failure.PolicyConfig{InitialBackoff: 50 * time.Millisecond, BreakerFailures: 1000})})
		if err == nil {
			t.Cleanup(func() { b.Close() })
			return b
		}
		if ctx.Err() != nil {
			t.Fatalf("connecting through node %d: %v", i, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// compare runs raw and viaBus for b.N operations each, alternating in
// chunks of 20 so that both see the same machine load (this box is shared),
// and reports the mean cost of each and their ratio. The ratio is the
// median of the per-chunk ratios: a burst of load from other processes
// skews a few chunks, not the result.
func compare(b *testing.B, raw, viaBus func(n int)) {
	b.Helper()
	const chunk = 20
	raw(min(b.N, 200)) // warm both paths up
	viaBus(min(b.N, 200))
	var rawD, busD time.Duration
	var ratios []float64
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(chunk, b.N-done)
		t0 := time.Now()
		raw(n)
		t1 := time.Now()
		viaBus(n)
		t2 := time.Now()
		rawD += t1.Sub(t0)
		busD += t2.Sub(t1)
		if t1.Sub(t0) > 0 {
			ratios = append(ratios, float64(t2.Sub(t1))/float64(t1.Sub(t0)))
		}
		done += n
	}
	b.StopTimer()
	slices.Sort(ratios)
	median := 0.0
	if len(ratios) > 0 {
		median = ratios[len(ratios)/2]
	}
	b.ReportMetric(float64(rawD.Nanoseconds())/float64(b.N), "raw-ns/op")
	b.ReportMetric(float64(busD.Nanoseconds())/float64(b.N), "bus-ns/op")
	b.ReportMetric(median, "bus/raw")
}

func wantKind(t *testing.T, err error, kind failure.Kind) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want a %s failure", kind)
	}
	var fe *failure.Error
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T) is not a *failure.Error", err, err)
	}
	if !errors.Is(err, kind) {
		t.Fatalf("error kind = %s, want %s (%v)", fe.Kind, kind, err)
	}
	if fe.Source != failure.SourceBus {
		t.Errorf("error source = %q, want bus", fe.Source)
	}
}

func errorsIs(err error, kind failure.Kind) bool { return errors.Is(err, kind) }

func contextWithCancel(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithCancel(ctx)
}
