// Package testkit holds the helpers Switchboard's tests share: a failure
// policy that retries quickly, contexts bounded by the test, and readers of
// model requests. Only tests import it.
package testkit

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// FastPolicy is the default policy with test-sized backoffs: the fields of
// cfg that are zero become InitialBackoff 1 ms and MaxBackoff 5 ms (the
// breaker keeps the policy's defaults unless cfg sets it).
func FastPolicy(cfg failure.PolicyConfig) failure.Policy {
	if cfg.InitialBackoff == 0 {
		cfg.InitialBackoff = time.Millisecond
	}
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = 5 * time.Millisecond
	}
	return failure.NewPolicy(cfg)
}

// SetDefault makes p the process's failure.Default for the rest of the
// test, so that what the test does to circuits stays in it, and restores the
// built-in default when the test ends. Tests that use it must not run in
// parallel with tests that use the default.
func SetDefault(t testing.TB, p failure.Policy) failure.Policy {
	failure.SetDefault(p)
	t.Cleanup(func() { failure.SetDefault(nil) })
	return p
}

// Ctx is a context that ends after d or with the test, whichever is first.
func Ctx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// LastUser is the text of the request's last user message ("" if none).
func LastUser(req *llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == llm.RoleUser {
			return req.Messages[i].Text
		}
	}
	return ""
}

// WaitFor polls cond until it holds, failing the test after d.
func WaitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Poll(d, cond) {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// Poll polls cond until it holds or d has passed, and reports whether it
// held: for a test that shows what it got when it did not.
func Poll(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}
