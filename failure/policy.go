package failure

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/rs/zerolog"
	"github.com/sony/gobreaker/v2"

	"github.com/switchboard-dev/switchboard/internal/redact"
)

// Key identifies one source for retries and circuit breaking: one MCP
// server, one A2A peer, one model provider.
type Key struct {
	Source Source
	Name   string
}

// String is "source/name".
func (k Key) String() string { return string(k.Source) + "/" + k.Name }

// Outcome is a policy's decision about one failure.
type Outcome struct {
	// Err is the classified failure.
	Err *Error
	// Abort says what the run does next: true ends the run with the
	// failure as its error; false reports it (gives it back to the model as
	// a tool result or, for failures outside a tool call, only logs and
	// reports it) and the run goes on.
	Abort bool
	// ModelText is the wording the model sees, when the failure is reported
	// to it. It never contains the raw cause of an unclassified error
	// unredacted.
	ModelText string
}

// Policy is the one place where failures are handled. Every component runs
// the operations it makes against a source through Execute, and hands every
// failure to Handle. Every Config with a Policy field uses [Default] when it
// is nil; replace the default for the whole process with [SetDefault], or give
// one component a policy of its own in its Config.
type Policy interface {
	// Execute runs op against the source key: transient failures are retried
	// with backoff and jitter, and the source is guarded by a circuit
	// breaker. An open circuit fails at once with Kind Unavailable.
	Execute(ctx context.Context, key Key, op func(context.Context) error) error
	// Handle classifies err, decides what happens to it, logs it and reports
	// it to the policy's observer. It never returns a nil Err for a non-nil err.
	Handle(ctx context.Context, err error) Outcome
	// Available reports whether calls to the source are let through (its
	// circuit is not open).
	Available(key Key) bool
}

// PolicyConfig configures the default policy. The zero value means defaults.
type PolicyConfig struct {
	// MaxAttempts is the number of attempts for a transient failure,
	// including the first (default 3; 1 disables retries).
	MaxAttempts int
	// InitialBackoff is the first retry delay (default 100ms); later delays
	// double up to MaxBackoff (default 2s), each with ±50% jitter.
	InitialBackoff time.Duration
	// MaxBackoff caps one retry delay (default 2s).
	MaxBackoff time.Duration
	// BreakerFailures is the number of consecutive source failures that
	// opens a source's circuit (default 5).
	BreakerFailures int
	// BreakerCooldown is how long a circuit stays open before one trial call
	// is let through (default 30s).
	BreakerCooldown time.Duration
	// Logger receives one structured line per handled failure and per
	// retry, and a line per circuit change (nil: the logger of the
	// operation's context, zerolog.Ctx, which an agent sets to its own
	// Logger for its runs; circuit changes are then not logged).
	Logger *zerolog.Logger
	// OnFailure, if set, is called once for every handled failure: the one
	// asynchronous failure callback. It must not block.
	OnFailure func(ctx context.Context, o Outcome)
	// OnStateChange, if set, is called when a source's circuit changes state.
	OnStateChange func(key Key, from, to string)
	// OnRetry, if set, is called before each retry of a transient failure,
	// with the failure and the delay before the next attempt. It must not
	// block.
	OnRetry func(ctx context.Context, key Key, err error, delay time.Duration)
}

// defaultPolicy is the policy NewPolicy returns.
type defaultPolicy struct {
	cfg PolicyConfig
	log zerolog.Logger

	mu       sync.Mutex
	breakers map[Key]*gobreaker.CircuitBreaker[struct{}]
}

// NewPolicy returns Switchboard's policy configured by cfg (the built-in
// [Default] is NewPolicy(PolicyConfig{})): retries with exponential backoff and jitter
// (cenkalti/backoff/v5), a circuit breaker per source (sony/gobreaker/v2),
// and the wording table of docs/failures.md. An Execute inside another
// Execute of the same policy and key (as when every component uses
// [Default]) runs its operation once, as an attempt of the outer one.
func NewPolicy(cfg PolicyConfig) Policy {
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 3
	}
	if cfg.InitialBackoff <= 0 {
		cfg.InitialBackoff = 100 * time.Millisecond
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 2 * time.Second
	}
	if cfg.BreakerFailures <= 0 {
		cfg.BreakerFailures = 5
	}
	if cfg.BreakerCooldown <= 0 {
		cfg.BreakerCooldown = 30 * time.Second
	}
	p := &defaultPolicy{cfg: cfg, log: zerolog.Nop(), breakers: map[Key]*gobreaker.CircuitBreaker[struct{}]{}}
	if cfg.Logger != nil {
		p.log = *cfg.Logger
	}
	return p
}

// logger is the policy's Logger, else the context's.
func (p *defaultPolicy) logger(ctx context.Context) *zerolog.Logger {
	if p.cfg.Logger != nil {
		return &p.log
	}
	return zerolog.Ctx(ctx)
}

// countsAgainstSource reports whether a failure says the source itself is
// unhealthy (and so counts toward opening its circuit).
func countsAgainstSource(k Kind) bool {
	switch k {
	case Transient, Timeout, Protocol, Unavailable, Unknown, Internal, Panic:
		return true
	}
	return false
}

func (p *defaultPolicy) breaker(key Key) *gobreaker.CircuitBreaker[struct{}] {
	p.mu.Lock()
	defer p.mu.Unlock()
	if b, ok := p.breakers[key]; ok {
		return b
	}
	threshold := uint32(p.cfg.BreakerFailures)
	b := gobreaker.NewCircuitBreaker[struct{}](gobreaker.Settings{
		Name:        key.String(),
		MaxRequests: 1,
		Timeout:     p.cfg.BreakerCooldown,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= threshold },
		IsExcluded: func(err error) bool {
			// A cancelled caller says nothing about the source's health, and
			// neither do the model's own mistakes; a failure this breaker
			// already counted (in a nested Execute) is not counted again.
			var fe *Error
			if errors.As(err, &fe) && fe.counted != nil && fe.counted.p == p && fe.counted.key == key {
				return true
			}
			k := KindOf(err)
			return k == Canceled || !countsAgainstSource(k)
		},
		OnStateChange: func(_ string, from, to gobreaker.State) {
			p.log.Warn().Str("source", key.String()).Str("from", from.String()).Str("to", to.String()).Msg("circuit state changed")
			if p.cfg.OnStateChange != nil {
				p.cfg.OnStateChange(key, from.String(), to.String())
			}
		},
	})
	p.breakers[key] = b
	return b
}

// Available reports whether the source's circuit is not open.
func (p *defaultPolicy) Available(key Key) bool {
	return p.breaker(key).State() != gobreaker.StateOpen
}

// Execute runs op with retries for transient failures and a circuit breaker
// for the source.
//
// An Execute inside another Execute of the same policy and key (an agent's
// tool call around an MCP manager's, both under the default) runs op once,
// as an attempt of the outer one: the outer Execute retries and counts it,
// and the inner one would otherwise be refused in the half-open state, whose
// one trial call the outer Execute holds.
func (p *defaultPolicy) Execute(ctx context.Context, key Key, op func(context.Context) error) error {
	if nested(ctx, p, key) {
		err := op(ctx)
		if err == nil {
			return nil
		}
		fe := From(err)
		if fe.Source == "" || fe.Name == "" {
			fe = withKey(fe, key, fe.counted)
		}
		return fe
	}
	ctx = &executeCtx{Context: ctx, p: p, key: key}
	b := p.breaker(key)
	attempt := func() (struct{}, error) {
		_, err := b.Execute(func() (struct{}, error) { return struct{}{}, op(ctx) })
		if err == nil {
			return struct{}{}, nil
		}
		if errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
			return struct{}{}, backoff.Permanent(&Error{
				Kind: Unavailable, Source: key.Source, Name: key.Name, Err: err,
				Message: fmt.Sprintf("%s %q is unavailable after repeated failures; it will be retried later", key.Source, key.Name),
			})
		}
		fe := From(err)
		if fe.Source == "" || fe.Name == "" || fe.counted == nil || fe.counted.p != p || fe.counted.key != key {
			fe = withKey(fe, key, &countMark{p: p, key: key})
		}
		if ctx.Err() != nil || fe.retried || !(fe.Retryable || fe.Kind.Retryable()) {
			return struct{}{}, backoff.Permanent(fe)
		}
		return struct{}{}, fe
	}
	// The common case, a first attempt that succeeds or fails for good,
	// needs no backoff machinery.
	_, err := attempt()
	if err == nil {
		return nil
	}
	var perm *backoff.PermanentError
	if errors.As(err, &perm) || p.cfg.MaxAttempts <= 1 {
		return finalError(key, err, false)
	}
	eb := backoff.NewExponentialBackOff()
	eb.InitialInterval = p.cfg.InitialBackoff
	eb.MaxInterval = p.cfg.MaxBackoff
	eb.RandomizationFactor = 0.5
	eb.Multiplier = 2
	// The first retry waits like any other; backoff.Retry then makes the
	// remaining attempts.
	d := eb.NextBackOff()
	p.notifyRetry(ctx, key, err, d)
	t := time.NewTimer(d)
	select {
	case <-ctx.Done():
		t.Stop()
		return finalError(key, err, false)
	case <-t.C:
	}
	_, err = backoff.Retry(ctx, attempt,
		backoff.WithBackOff(eb),
		backoff.WithMaxTries(uint(p.cfg.MaxAttempts-1)),
		backoff.WithMaxElapsedTime(0),
		backoff.WithNotify(func(err error, d time.Duration) { p.notifyRetry(ctx, key, err, d) }))
	if err == nil {
		return nil
	}
	return finalError(key, err, true)
}

// withKey is a copy of fe naming key's source and name where fe names
// none, marked as counted by mark.
func withKey(fe *Error, key Key, mark *countMark) *Error {
	c := *fe
	if c.Source == "" {
		c.Source = key.Source
	}
	if c.Name == "" {
		c.Name = key.Name
	}
	c.counted = mark
	return &c
}

// executeCtx is the context of the operation an Execute runs: it names the
// policy and key, so that a nested Execute of the same ones is recognised.
type executeCtx struct {
	context.Context
	p   *defaultPolicy
	key Key
}

// executeCtxKey finds the innermost executeCtx of a context.
type executeCtxKey struct{}

func (c *executeCtx) Value(k any) any {
	if k == (executeCtxKey{}) {
		return c
	}
	return c.Context.Value(k)
}

// nested reports whether ctx is inside an Execute of p for key.
func nested(ctx context.Context, p *defaultPolicy, key Key) bool {
	for c, _ := ctx.Value(executeCtxKey{}).(*executeCtx); c != nil; c, _ = c.Context.Value(executeCtxKey{}).(*executeCtx) {
		if c.p == p && c.key == key {
			return true
		}
	}
	return false
}

func (p *defaultPolicy) notifyRetry(ctx context.Context, key Key, err error, d time.Duration) {
	p.logger(ctx).Info().Err(err).Str("source", key.String()).Dur("backoff", d).Msg("retrying after a transient failure")
	if p.cfg.OnRetry != nil {
		p.cfg.OnRetry(ctx, key, err, d)
	}
}

// finalError unwraps what the retry loop returned: backoff returns the
// context's error when it gives up waiting, so keep the last failure's
// classification when there is one. A retryable failure that went through
// the retry loop is marked retried.
func finalError(key Key, err error, retried bool) error {
	var fe *Error
	if !errors.As(err, &fe) {
		fe = Wrap(KindOf(err), key.Source, err)
	}
	if retried && !fe.retried && (fe.Retryable || fe.Kind.Retryable()) {
		c := *fe
		c.retried = true
		return &c
	}
	return fe
}

// Handle classifies err, decides, logs and reports.
func (p *defaultPolicy) Handle(ctx context.Context, err error) Outcome {
	fe := From(err)
	o := Outcome{Err: fe, Abort: defaultAbort(fe.Kind), ModelText: fe.ModelText()}
	log := p.logger(ctx)
	ev := log.Warn()
	if o.Abort {
		ev = log.Error()
	}
	ev.Ctx(ctx).Str("kind", fe.Kind.String()).Str("source", string(fe.Source)).Str("name", fe.Name).
		Str("tool", fe.Tool).Str("action", actionName(o.Abort)).Err(fe).Msg("failure handled")
	if p.cfg.OnFailure != nil {
		p.cfg.OnFailure(ctx, o)
	}
	return o
}

// defaultAbort is the default policy's decision table: budgets, panics,
// model failures, configuration errors and cancellation end the run;
// everything the model can act on is reported to it.
func defaultAbort(k Kind) bool {
	switch k {
	case Budget, Panic, Model, Config, Canceled, Parked:
		return true
	}
	return false
}

// actionName is how logs and events name an outcome: "abort" or "report".
func actionName(abort bool) string {
	if abort {
		return "abort"
	}
	return "report"
}

// ModelText words the failure for the model: short, actionable, and free
// of secrets (the cause of an unclassified error is redacted).
func (e *Error) ModelText() string {
	who := "the tool"
	if e.Tool != "" {
		who = fmt.Sprintf("tool %q", e.Tool)
	}
	if e.Message != "" {
		return fmt.Sprintf("Error (%s) from %s: %s", e.Kind, who, redact.Redact(e.Message))
	}
	detail := ""
	if e.Err != nil {
		detail = ": " + redact.Redact(e.Err.Error())
	}
	switch e.Kind {
	case InvalidArgs:
		return fmt.Sprintf("Error: the arguments for %s were invalid%s. Fix them and call it again.", who, detail)
	case UnknownTool:
		return fmt.Sprintf("Error: there is no %s. Use only the tools listed.", who)
	case ToolError:
		return fmt.Sprintf("Error: %s reported a failure%s", who, detail)
	case PermissionDenied:
		return fmt.Sprintf("Error: permission to use %s was denied. Do not retry it; choose another way or tell the user.", who)
	case Declined:
		return fmt.Sprintf("Error: the user declined the request made by %s. Do not ask again; continue without it.", who)
	case Timeout:
		return fmt.Sprintf("Error: %s timed out and was cancelled. You may try again with a smaller request.", who)
	case Transient:
		return fmt.Sprintf("Error: %s failed with a temporary error after retries. You may try again later.", who)
	case Unavailable:
		return fmt.Sprintf("Error: %s is unavailable right now (its source keeps failing). Do not rely on it for now.", who)
	case Protocol:
		return fmt.Sprintf("Error: %s answered with something malformed.", who)
	case Rejected:
		return fmt.Sprintf("Error: the remote task behind %s did not complete%s", who, detail)
	case NotFound:
		return fmt.Sprintf("Error: what %s was asked for does not exist%s", who, detail)
	case Conflict:
		return fmt.Sprintf("Error: %s lost a conflict with another change%s. Read the current state and try again.", who, detail)
	case InDoubt:
		return fmt.Sprintf("Error: the outcome of the call to %s is unknown: it was started, but the run was interrupted "+
			"before its result was recorded, and it was not run again. Check whether it took effect (with a read-only "+
			"tool, or by asking the user) before calling it again.", who)
	case Parked:
		return fmt.Sprintf("The call to %s waits for a person's answer.", who)
	case Guardrail:
		return fmt.Sprintf("Error: a guardrail blocked %s%s. Do not retry it unchanged.", who, detail)
	case Panic:
		return fmt.Sprintf("Error: %s crashed.", who)
	case Canceled:
		return fmt.Sprintf("Error: the call to %s was cancelled.", who)
	case Budget:
		return "Error: the run's budget is exhausted."
	}
	return fmt.Sprintf("Error: %s failed%s", who, detail)
}
