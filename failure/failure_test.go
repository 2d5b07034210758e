package failure_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/switchboard-dev/switchboard/failure"
)

func TestClassification(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want failure.Kind
	}{
		{"deadline", context.DeadlineExceeded, failure.Timeout},
		{"cancel", fmt.Errorf("op: %w", context.Canceled), failure.Canceled},
		{"eof", io.ErrUnexpectedEOF, failure.Transient},
		{"reset", &net.OpError{Op: "read", Err: syscall.ECONNRESET}, failure.Transient},
		{"refused", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), failure.Transient},
		{"typed", fmt.Errorf("wrapped: %w", failure.New(failure.PermissionDenied, failure.SourceMCP, "no")), failure.PermissionDenied},
		{"kind as error", fmt.Errorf("x: %w", failure.Declined), failure.Declined},
		{"plain", errors.New("plain"), failure.Unknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := failure.KindOf(tc.err); got != tc.want {
				t.Fatalf("KindOf = %s, want %s", got, tc.want)
			}
			if fe := failure.From(tc.err); !errors.Is(fe, tc.want) {
				t.Fatalf("errors.Is(From(err), %s) is false", tc.want)
			}
		})
	}
}

func TestErrorIsAs(t *testing.T) {
	cause := errors.New("socket closed")
	err := fmt.Errorf("calling: %w", &failure.Error{Kind: failure.Transient, Source: failure.SourceMCP, Name: "files", Tool: "mcp__files__read", Err: cause})
	if !errors.Is(err, failure.Transient) || errors.Is(err, failure.Timeout) {
		t.Fatal("errors.Is by kind is wrong")
	}
	if !errors.Is(err, cause) {
		t.Fatal("cause not reachable")
	}
	var fe *failure.Error
	if !errors.As(err, &fe) || fe.Name != "files" {
		t.Fatal("errors.As failed")
	}
	if got := fe.Error(); got != `mcp/files: tool mcp__files__read: transient: socket closed` {
		t.Errorf("Error() = %q", got)
	}
	var k failure.Kind
	if err := k.UnmarshalText([]byte("permission_denied")); err != nil || k != failure.PermissionDenied {
		t.Errorf("UnmarshalText: %v %v", k, err)
	}
}

func TestModelTextNeverLeaksCause(t *testing.T) {
	e := &failure.Error{Kind: failure.Transient, Source: failure.SourceA2A, Name: "peer", Tool: "ask_peer",
		Err: errors.New("GET https://u:secretpw@peer/x: token=abc123 refused")}
	got := e.ModelText()
	if strings.Contains(got, "secretpw") || strings.Contains(got, "abc123") {
		t.Fatalf("leak: %q", got)
	}
	for _, k := range []failure.Kind{failure.InvalidArgs, failure.UnknownTool, failure.ToolError, failure.PermissionDenied,
		failure.Declined, failure.Timeout, failure.Unavailable, failure.Protocol, failure.Rejected, failure.Panic, failure.Budget,
		failure.Guardrail} {
		if txt := (&failure.Error{Kind: k, Tool: "t"}).ModelText(); !strings.HasPrefix(txt, "Error") {
			t.Errorf("%s: %q", k, txt)
		}
	}
}

func TestDefaultActions(t *testing.T) {
	for k, want := range map[failure.Kind]bool{
		failure.Transient: false, failure.InvalidArgs: false, failure.UnknownTool: false,
		failure.ToolError: false, failure.PermissionDenied: false, failure.Declined: false,
		failure.Timeout: false, failure.Unavailable: false,
		failure.Budget: true, failure.Panic: true, failure.Canceled: true, failure.Model: true,
		failure.InDoubt: false, failure.Parked: true, failure.Guardrail: false,
	} {
		if got := failure.NewPolicy(failure.PolicyConfig{}).Handle(context.Background(), failure.New(k, failure.SourceTool, "x")).Abort; got != want {
			t.Errorf("%s: abort %v, want %v", k, got, want)
		}
	}
}

// TestPolicyRetryAndBreaker runs on synctest's clock: the 20 ms cooldown
// cannot pass while the circuit is expected open, however busy the machine.
func TestPolicyRetryAndBreaker(t *testing.T) { synctest.Test(t, testPolicyRetryAndBreaker) }

func testPolicyRetryAndBreaker(t *testing.T) {
	var reported, retries atomic.Int32
	var transitions []string
	p := failure.NewPolicy(failure.PolicyConfig{InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond,
		MaxAttempts: 3, BreakerFailures: 3, BreakerCooldown: 20 * time.Millisecond,
		OnFailure:     func(context.Context, failure.Outcome) { reported.Add(1) },
		OnRetry:       func(context.Context, failure.Key, error, time.Duration) { retries.Add(1) },
		OnStateChange: func(_ failure.Key, from, to string) { transitions = append(transitions, from+"->"+to) }})
	key := failure.Key{Source: failure.SourceMCP, Name: "srv"}
	ctx := context.Background()

	// Non-retryable kinds run once and do not trip the breaker.
	n := 0
	err := p.Execute(ctx, key, func(context.Context) error { n++; return failure.New(failure.InvalidArgs, "", "bad") })
	if n != 1 || !errors.Is(err, failure.InvalidArgs) {
		t.Fatalf("invalid args: %d attempts, %v", n, err)
	}
	// Transient failures are retried; the source name is filled in.
	n = 0
	err = p.Execute(ctx, key, func(context.Context) error { n++; return io.ErrUnexpectedEOF })
	var fe *failure.Error
	if n != 3 || !errors.As(err, &fe) || fe.Kind != failure.Transient || fe.Name != "srv" {
		t.Fatalf("transient: %d attempts, %v", n, err)
	}
	if retries.Load() != 2 {
		t.Errorf("OnRetry called %d times, want 2", retries.Load())
	}
	if p.Available(key) {
		t.Fatal("circuit should be open after consecutive failures")
	}
	n = 0
	err = p.Execute(ctx, key, func(context.Context) error { n++; return nil })
	if n != 0 || !errors.Is(err, failure.Unavailable) {
		t.Fatalf("open circuit: %d attempts, %v", n, err)
	}
	time.Sleep(40 * time.Millisecond) // the cooldown, on synctest's clock
	if err := p.Execute(ctx, key, func(context.Context) error { return nil }); err != nil {
		t.Fatalf("after cooldown: %v", err)
	}
	if !p.Available(key) {
		t.Fatal("circuit did not close")
	}
	if len(transitions) != 3 {
		t.Errorf("transitions %v", transitions)
	}
	o := p.Handle(ctx, err2())
	if !o.Abort || reported.Load() != 1 {
		t.Errorf("handle: %+v reported %d", o, reported.Load())
	}
	// A cancelled context stops retrying at once.
	cctx, cancel := context.WithCancel(ctx)
	n = 0
	err = p.Execute(cctx, failure.Key{Source: failure.SourceMCP, Name: "other"}, func(context.Context) error {
		n++
		cancel()
		return io.ErrUnexpectedEOF
	})
	if n != 1 || err == nil {
		t.Fatalf("cancel: %d attempts, %v", n, err)
	}
}

func err2() error { return &failure.Error{Kind: failure.Panic, Err: &failure.PanicError{Value: "x"}} }

func ExampleKindOf() {
	err := fmt.Errorf("reading: %w", context.DeadlineExceeded)
	fmt.Println(failure.KindOf(err), errors.Is(failure.From(err), failure.Timeout))
	// Output: timeout true
}

func ExampleNewPolicy() {
	p := failure.NewPolicy(failure.PolicyConfig{MaxAttempts: 2, InitialBackoff: time.Millisecond})
	attempts := 0
	err := p.Execute(context.Background(), failure.Key{Source: failure.SourceMCP, Name: "files"}, func(context.Context) error {
		attempts++
		if attempts == 1 {
			return io.ErrUnexpectedEOF // transient: retried
		}
		return nil
	})
	fmt.Println(attempts, err)
	o := p.Handle(context.Background(), failure.New(failure.PermissionDenied, failure.SourceAgent, "denied by rule"))
	fmt.Println("abort:", o.Abort, "-", o.ModelText)
	// Output:
	// 2 <nil>
	// abort: false - Error (permission_denied) from the tool: denied by rule
}

// TestNestedExecuteDoesNotMultiplyRetries: a failure an inner Execute
// retried to exhaustion is not retried again by an outer one (the agent's,
// around an MCP or A2A tool that runs its own policy).
func TestNestedExecuteDoesNotMultiplyRetries(t *testing.T) {
	p := failure.NewPolicy(failure.PolicyConfig{InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond, MaxAttempts: 3, BreakerFailures: 100})
	ctx := context.Background()
	inner := 0
	err := p.Execute(ctx, failure.Key{Source: failure.SourceTool, Name: "outer"}, func(ctx context.Context) error {
		return fmt.Errorf("tool: %w", p.Execute(ctx, failure.Key{Source: failure.SourceA2A, Name: "peer"}, func(context.Context) error {
			inner++
			return io.ErrUnexpectedEOF
		}))
	})
	var fe *failure.Error
	if inner != 3 || !errors.As(err, &fe) || !fe.Retried() || fe.Kind != failure.Transient {
		t.Fatalf("inner attempts = %d (want 3), err = %v", inner, err)
	}
}

// TestNestedExecuteCountsOnce nests Execute with one policy and one key (an
// agent around a source that runs its own): each failure is counted once,
// so the circuit opens after BreakerFailures calls, not half as many.
func TestNestedExecuteCountsOnce(t *testing.T) {
	p := failure.NewPolicy(failure.PolicyConfig{MaxAttempts: 1, BreakerFailures: 4, BreakerCooldown: time.Minute})
	key := failure.Key{Source: failure.SourceA2A, Name: "peer"}
	ctx := context.Background()
	down := &failure.Error{Kind: failure.Unavailable, Source: failure.SourceA2A, Message: "peer down"}
	for i := range 4 {
		if !p.Available(key) {
			t.Fatalf("circuit open after %d failures; want it to open after 4", i)
		}
		err := p.Execute(ctx, key, func(ctx context.Context) error {
			return p.Execute(ctx, key, func(context.Context) error { return down })
		})
		if !errors.Is(err, failure.Unavailable) {
			t.Fatalf("err = %v", err)
		}
	}
	if p.Available(key) {
		t.Fatal("circuit still closed after 4 failures")
	}
}

func TestMarkRetried(t *testing.T) {
	p := failure.NewPolicy(failure.PolicyConfig{InitialBackoff: time.Millisecond, MaxBackoff: time.Millisecond, MaxAttempts: 3, BreakerFailures: 100})
	remote := &failure.Error{Kind: failure.Transient, Source: failure.SourceModel, Message: "503 after retries"}
	cases := []struct {
		name string
		err  *failure.Error
		want int
	}{
		{"transient is retried", remote, 3},
		{"marked retried is not", remote.MarkRetried(), 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			_ = p.Execute(context.Background(), failure.Key{Source: failure.SourceBus, Name: tc.name}, func(context.Context) error {
				n++
				return tc.err
			})
			if n != tc.want {
				t.Fatalf("%d attempts, want %d", n, tc.want)
			}
		})
	}
	if remote.Retried() {
		t.Fatal("MarkRetried changed the original")
	}
}

// The durability kinds have stable names, and the model is told what an
// in-doubt call means without the failure's cause.
func TestDurabilityKinds(t *testing.T) {
	for k, name := range map[failure.Kind]string{failure.InDoubt: "in_doubt", failure.Parked: "parked", failure.Guardrail: "guardrail"} {
		var back failure.Kind
		if k.String() != name || back.UnmarshalText([]byte(name)) != nil || back != k {
			t.Errorf("%d: name %q, decoded %v", int(k), k.String(), back)
		}
	}
	text := (&failure.Error{Kind: failure.InDoubt, Tool: "pay", Err: errors.New("secret=abc")}).ModelText()
	if !strings.Contains(text, "unknown") || !strings.Contains(text, "not run again") || strings.Contains(text, "secret") {
		t.Errorf("in-doubt text: %q", text)
	}
}

// TestNestedExecuteRecovers: a circuit opened by nested calls (one policy,
// one key) lets the nested trial call through after the cooldown and closes
// again; the inner Execute is not refused for the half-open trial the outer
// one holds.
func TestNestedExecuteRecovers(t *testing.T) { synctest.Test(t, testNestedExecuteRecovers) }

func testNestedExecuteRecovers(t *testing.T) {
	p := failure.NewPolicy(failure.PolicyConfig{MaxAttempts: 1, BreakerFailures: 1, BreakerCooldown: 20 * time.Millisecond})
	key := failure.Key{Source: failure.SourceMCP, Name: "srv"}
	ctx := context.Background()
	var fail atomic.Bool
	fail.Store(true)
	calls := 0
	nestedCall := func() error {
		return p.Execute(ctx, key, func(ctx context.Context) error {
			return p.Execute(ctx, key, func(context.Context) error {
				calls++
				if fail.Load() {
					return &failure.Error{Kind: failure.Transient, Source: failure.SourceMCP, Message: "down"}
				}
				return nil
			})
		})
	}
	if err := nestedCall(); !errors.Is(err, failure.Transient) {
		t.Fatalf("first call: %v, want transient", err)
	}
	if p.Available(key) {
		t.Fatal("circuit closed after the failure")
	}
	fail.Store(false)
	time.Sleep(30 * time.Millisecond) // the cooldown, on synctest's clock
	if !p.Available(key) {
		t.Fatal("circuit still open after the cooldown")
	}
	if err := nestedCall(); err != nil {
		t.Fatalf("trial call after the cooldown: %v", err)
	}
	if err := nestedCall(); err != nil || calls != 3 {
		t.Fatalf("call after recovery: %v; op ran %d times, want 3", err, calls)
	}
}

// TestNestedPoliciesDoNotMultiply: an Execute under one policy inside an
// Execute of another (an agent given a policy around a provider left on the
// default), for the same key or another: the inner one's retries are the
// only ones; the outer one does not retry a failure already retried.
func TestNestedPoliciesDoNotMultiply(t *testing.T) {
	for _, c := range []struct {
		name      string
		innerKey  failure.Key
		wantCalls int
	}{
		{"same key", failure.Key{Source: failure.SourceModel, Name: "m"}, 3},
		{"other key", failure.Key{Source: failure.SourceMCP, Name: "srv"}, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				outer := failure.NewPolicy(failure.PolicyConfig{MaxAttempts: 3, InitialBackoff: time.Millisecond, BreakerFailures: 100})
				inner := failure.NewPolicy(failure.PolicyConfig{MaxAttempts: 3, InitialBackoff: time.Millisecond, BreakerFailures: 100})
				calls := 0
				err := outer.Execute(context.Background(), failure.Key{Source: failure.SourceModel, Name: "m"}, func(ctx context.Context) error {
					return inner.Execute(ctx, c.innerKey, func(context.Context) error {
						calls++
						return &failure.Error{Kind: failure.Transient, Source: c.innerKey.Source, Name: c.innerKey.Name, Retryable: true, Message: "down"}
					})
				})
				if !errors.Is(err, failure.Transient) {
					t.Fatalf("err = %v, want transient", err)
				}
				if calls != c.wantCalls {
					t.Errorf("op ran %d times, want %d", calls, c.wantCalls)
				}
			})
		})
	}
}
