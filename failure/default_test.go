package failure_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/failure"
)

// TestDefault: Default is the built-in policy until SetDefault replaces it,
// SetDefault(nil) restores the built-in one, and Or prefers a given policy.
func TestDefault(t *testing.T) {
	t.Cleanup(func() { failure.SetDefault(nil) })
	builtin := failure.Default()
	if builtin == nil {
		t.Fatal("Default is nil before SetDefault")
	}
	mine, other := failure.NewPolicy(failure.PolicyConfig{}), failure.NewPolicy(failure.PolicyConfig{})
	tests := []struct {
		name    string
		set     failure.Policy // passed to SetDefault (nil restores)
		given   failure.Policy // passed to Or
		want    failure.Policy // Default afterwards
		wantOr  failure.Policy // Or(given) afterwards
		sameOld bool           // want is the built-in policy
	}{
		{name: "set", set: mine, want: mine, wantOr: mine},
		{name: "replace", set: other, want: other, wantOr: other},
		{name: "given wins", set: mine, given: other, want: mine, wantOr: other},
		{name: "restore", set: nil, sameOld: true},
		{name: "restore twice", set: nil, sameOld: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			failure.SetDefault(tt.set)
			want, wantOr := tt.want, tt.wantOr
			if tt.sameOld {
				want, wantOr = builtin, builtin
			}
			if got := failure.Default(); got != want {
				t.Errorf("Default() = %p, want %p", got, want)
			}
			if got := failure.Or(tt.given); got != wantOr {
				t.Errorf("Or(%p) = %p, want %p", tt.given, got, wantOr)
			}
		})
	}
}

// TestDefaultReachesEveryUse: a policy asked for at each use (as every
// component does with Or) follows SetDefault, and the swap is safe while
// other goroutines use the default.
func TestDefaultReachesEveryUse(t *testing.T) {
	t.Cleanup(func() { failure.SetDefault(nil) })
	var mu sync.Mutex
	seen := map[string]int{}
	count := func(name string) failure.Policy {
		return failure.NewPolicy(failure.PolicyConfig{OnFailure: func(context.Context, failure.Outcome) {
			mu.Lock()
			seen[name]++
			mu.Unlock()
		}})
	}
	var cfgPolicy failure.Policy // a component's Config left it nil
	fail := func() { failure.Or(cfgPolicy).Handle(context.Background(), errors.New("boom")) }

	failure.SetDefault(count("a"))
	fail()
	failure.SetDefault(count("b"))
	fail()
	if seen["a"] != 1 || seen["b"] != 1 {
		t.Fatalf("failures seen by the defaults %v, want one each", seen)
	}

	failure.SetDefault(count("c"))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 100 {
				if i%2 == 0 {
					failure.SetDefault(count("c"))
				} else {
					fail()
				}
			}
		})
	}
	wg.Wait()
	if seen["c"] != 400 {
		t.Errorf("%d failures seen by the concurrent defaults, want 400", seen["c"])
	}
}

// TestPolicyLogsToContext: a policy without a Logger logs each handled
// failure to the logger of the operation's context, and nowhere without one.
func TestPolicyLogsToContext(t *testing.T) {
	for _, withLogger := range []bool{true, false} {
		var buf bytes.Buffer
		ctx := context.Background()
		if withLogger {
			ctx = zerolog.New(&buf).WithContext(ctx)
		}
		failure.NewPolicy(failure.PolicyConfig{}).Handle(ctx, errors.New("boom"))
		if got := strings.Contains(buf.String(), "failure handled"); got != withLogger {
			t.Errorf("context logger %v: logged %q", withLogger, buf.String())
		}
	}
}
