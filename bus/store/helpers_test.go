package store_test

import (
	"context"
	"errors"
	"os"
	"testing"

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
func newBus(t testing.TB, cfg bus.Config) *bus.Bus { return testkit.NewBus(t, cfg) }

func wantKind(t *testing.T, err error, kind failure.Kind) {
	t.Helper()
	testkit.WantKind(t, err, kind, failure.SourceBus)
}

func errorsIs(err error, kind failure.Kind) bool { return errors.Is(err, kind) }

func contextWithCancel(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithCancel(ctx)
}
