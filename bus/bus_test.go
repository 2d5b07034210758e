package bus_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/internal/wire"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
)

func TestMain(m *testing.M) {
	// nats.go v1.55's object store Put makes a JetStream context per call
	// whose reconnect watcher reads its status channel after Put's
	// deferred cleanup may have set it to nil: under load the watcher then
	// blocks forever (jetstream/object.go:693, publish.go:567). The store
	// writes large records with Put; that goroutine is nats.go's, not ours.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/nats-io/nats.go/jetstream.(*jetStream).resetPendingAcksOnReconnect"),
		fuzzEngine)
}

// fuzzEngine ignores the goroutine Go's fuzzing engine leaves blocked on
// its pipe when it stops (internal/fuzz's contextReader.Read, which says
// so): under load it is still there when the fuzz worker or coordinator
// exits, and goleak then failed FuzzDecodeKVValue with no failing input.
var fuzzEngine = goleak.IgnoreAnyFunction("internal/fuzz.(*contextReader).Read.func1")

// newBus starts a bus on a real embedded server, closed with the test.
func newBus(t testing.TB, cfg bus.Config) *bus.Bus { return testkit.NewBus(t, cfg) }

func wantKind(t *testing.T, err error, kind failure.Kind) {
	t.Helper()
	testkit.WantKind(t, err, kind, failure.SourceBus)
}

func TestNewEmbeddedAndClose(t *testing.T) {
	tests := []struct {
		name     string
		cfg      bus.Config
		tempDir  bool
		wantURL  bool
		joinWith func(cfg *bus.Config)
	}{
		{name: "in-process with temp store", cfg: bus.Config{}, tempDir: true},
		{name: "custom prefix and store dir", cfg: bus.Config{Prefix: "acme.prod", StoreDir: t.TempDir()}},
		{name: "listening on loopback with a token", cfg: bus.Config{Listen: "127.0.0.1:0", Token: "s3cret-token"}, tempDir: true, wantURL: true,
			joinWith: func(cfg *bus.Config) { cfg.Token = "s3cret-token" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Temp store dirs are counted in a TMPDIR of this test's own:
			// other packages' tests create and remove theirs in the
			// shared one at the same time.
			t.Setenv("TMPDIR", t.TempDir())
			ctx := ctxT(t, 30*time.Second)
			before, _ := filepath.Glob(filepath.Join(os.TempDir(), "switchboard-nats-*"))
			b, err := bus.New(ctx, tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			// A round trip under this configuration's prefix.
			if err := bus.PublishProgress(ctx, b, bus.ProgressUpdate{Run: "r0", Progress: 7}); err != nil {
				t.Fatal(err)
			}
			sub, err := b.SubscribeProgress(ctx, "r0", bus.ProgressOptions{Replay: true})
			if err != nil {
				t.Fatal(err)
			}
			if p, err := sub.Next(ctx); err != nil || p.Progress != 7 {
				t.Fatalf("replayed %+v, %v", p, err)
			}
			sub.Close()
			if got := b.ClientURL() != ""; got != tt.wantURL {
				t.Errorf("ClientURL() = %q, want set: %v", b.ClientURL(), tt.wantURL)
			}
			if tt.joinWith != nil {
				// Another "process" joins through the loopback port.
				cfg := bus.Config{URLs: []string{b.ClientURL()}}
				other, err := bus.New(ctx, bus.Config{URLs: []string{b.ClientURL()}})
				if err == nil {
					other.Close()
					t.Fatal("joining without the token succeeded")
				}
				wantKind(t, err, failure.Unavailable)
				tt.joinWith(&cfg)
				other, err = bus.New(ctx, cfg)
				if err != nil {
					t.Fatalf("joining with the token: %v", err)
				}
				if err := bus.PublishProgress(ctx, other, bus.ProgressUpdate{Run: "r1", Progress: 1}); err != nil {
					t.Fatal(err)
				}
				if err := other.Close(); err != nil {
					t.Fatal(err)
				}
			}
			during, _ := filepath.Glob(filepath.Join(os.TempDir(), "switchboard-nats-*"))
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			if err := b.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
			after, _ := filepath.Glob(filepath.Join(os.TempDir(), "switchboard-nats-*"))
			if tt.tempDir && (len(during) != len(before)+1 || len(after) != len(before)) {
				t.Errorf("temp store dirs: before %d, during %d, after %d; want n, n+1, n", len(before), len(during), len(after))
			}
			if err := bus.PublishProgress(ctx, b, bus.ProgressUpdate{Run: "r1"}); err == nil {
				t.Error("publish after Close succeeded")
			} else {
				wantKind(t, err, failure.Unavailable)
			}
		})
	}
}

func TestNewBadConfig(t *testing.T) {
	ctx := ctxT(t, 10*time.Second)
	tests := []struct {
		name string
		cfg  bus.Config
		kind failure.Kind
	}{
		{"bad listen address", bus.Config{Listen: "no-port"}, failure.Config},
		{"bad listen port", bus.Config{Listen: "127.0.0.1:99999"}, failure.Config},
		{"nothing at the URL", bus.Config{URLs: []string{"nats://127.0.0.1:1"}, ConnectTimeout: time.Second}, failure.Unavailable},
		{"missing nkey file", bus.Config{URLs: []string{"nats://127.0.0.1:1"}, NKeyFile: "/nonexistent/seed.nk"}, failure.Config},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := bus.New(ctx, tt.cfg)
			if err == nil {
				b.Close()
				t.Fatal("New succeeded")
			}
			wantKind(t, err, tt.kind)
		})
	}
}

func TestSubjects(t *testing.T) {
	s := bus.NewSubjects("acme.prod line")
	tests := []struct{ got, want string }{
		{s.Prefix(), "acme.prod_line"},
		{s.Events("run_abc"), "acme.prod_line.events.run_abc"},
		{s.Events("a.b*>c d"), "acme.prod_line.events.a_b__c_d"},
		{s.Progress(""), "acme.prod_line.progress._"},
		{s.Sampling(), "acme.prod_line.sampling"},
		{s.Elicit("r1"), "acme.prod_line.elicit.r1"},
		{s.Task("task-7"), "acme.prod_line.a2a.tasks.task-7"},
		{bus.NewSubjects("").Events("x"), "switchboard.events.x"},
	}
	if got := wire.Token(string(make([]byte, 300))); len(got) != 128 {
		t.Errorf("a 300-byte token was cut to %d bytes, want 128", len(got))
	}
	for i, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%d: got %q, want %q", i, tt.got, tt.want)
		}
	}
}

func errorsIs(err error, kind failure.Kind) bool { return errors.Is(err, kind) }

func contextWithCancel(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithCancel(ctx)
}

func TestStreamLimits(t *testing.T) {
	b := newBus(t, bus.Config{Prefix: "limits", Stream: bus.StreamConfig{MaxAge: time.Minute, MaxBytes: 1 << 20, Memory: true}})
	ctx := ctxT(t, 10*time.Second)
	st, err := b.JetStream().Stream(ctx, b.StreamName())
	if err != nil {
		t.Fatal(err)
	}
	c := st.CachedInfo().Config
	if b.StreamName() != "LIMITS" || c.MaxAge != time.Minute || c.MaxBytes != 1<<20 || c.Storage.String() != "Memory" {
		t.Errorf("stream %s: max age %s, max bytes %d, storage %s", b.StreamName(), c.MaxAge, c.MaxBytes, c.Storage)
	}
	want := []string{"limits.events.>", "limits.progress.>", "limits.a2a.tasks.>"}
	if len(c.Subjects) != 3 || c.Subjects[0] != want[0] || c.Subjects[1] != want[1] || c.Subjects[2] != want[2] {
		t.Errorf("stream subjects = %v, want %v", c.Subjects, want)
	}
}

var ctxT = testkit.Ctx
