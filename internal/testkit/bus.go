package testkit

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/failure"
)

// NewBus starts a bus (an embedded server unless cfg has URLs), closed
// with the test. A nil cfg.Policy is a quick one: 2 attempts, 10 ms apart.
func NewBus(t testing.TB, cfg bus.Config) *bus.Bus {
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

// WantKind asserts that err is a *failure.Error of kind from src (""
// any source) and returns it.
func WantKind(t testing.TB, err error, kind failure.Kind, src failure.Source) *failure.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want a %s failure", kind)
	}
	var fe *failure.Error
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T) is not a *failure.Error", err, err)
	}
	if !errors.Is(err, kind) {
		t.Fatalf("kind = %s, want %s (%v)", fe.Kind, kind, err)
	}
	if src != "" && fe.Source != src {
		t.Errorf("source = %q, want %q (%v)", fe.Source, src, err)
	}
	return fe
}
