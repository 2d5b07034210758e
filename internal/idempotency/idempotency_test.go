package idempotency_test

import (
	"context"
	"testing"

	"github.com/switchboard-dev/switchboard/internal/idempotency"
)

func TestWithKey(t *testing.T) {
	for _, tc := range []struct{ set, want string }{{"", ""}, {"run_1:call_2", "run_1:call_2"}} {
		ctx := idempotency.With(context.Background(), tc.set)
		if got := idempotency.Key(ctx); got != tc.want {
			t.Errorf("With(%q): Key = %q, want %q", tc.set, got, tc.want)
		}
	}
	if got := idempotency.Key(context.Background()); got != "" {
		t.Errorf("a bare context carries %q", got)
	}
}
