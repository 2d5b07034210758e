// Package jsfail maps the errors of nats.go and JetStream to the failure
// taxonomy, for bus and bus/store: one classification for the messaging
// and the stores on the same connection.
package jsfail

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/sony/gobreaker/v2"

	"github.com/switchboard-dev/switchboard/failure"
)

// ErrNotFound is the cause of a failure of kind NotFound from a bucket: a
// key that does not exist (callers test errors.Is(err, failure.NotFound)).
var ErrNotFound = errors.New("bus: key not found")

// ErrConflict is the cause of a failure of kind Conflict from a bucket: a
// create of an existing key or an update with a stale revision (callers
// test errors.Is(err, failure.Conflict)).
var ErrConflict = errors.New("bus: revision conflict")

// Classify maps an error of nats.go or jetstream to the failure taxonomy.
// It returns nil for nil, and *failure.Error values unchanged.
func Classify(err error, op string) error {
	if err == nil {
		return nil
	}
	var fe *failure.Error
	if errors.As(err, &fe) {
		return err
	}
	e := &failure.Error{Source: failure.SourceBus, Op: op, Err: err}
	switch {
	case errors.Is(err, nats.ErrNoResponders), errors.Is(err, jetstream.ErrNoStreamResponse):
		e.Kind, e.Message = failure.Unavailable, "no responder is listening"
	case errors.Is(err, context.Canceled):
		e.Kind, e.Message = failure.Canceled, "the request was cancelled"
	case errors.Is(err, nats.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		e.Kind, e.Message = failure.Timeout, "no answer before the deadline"
	case errors.Is(err, nats.ErrConnectionClosed), errors.Is(err, nats.ErrConnectionDraining),
		errors.Is(err, nats.ErrDrainTimeout), errors.Is(err, nats.ErrBadSubscription):
		e.Kind, e.Message = failure.Unavailable, "the bus connection is closed"
	case errors.Is(err, nats.ErrConnectionReconnecting), errors.Is(err, nats.ErrDisconnected),
		errors.Is(err, nats.ErrReconnectBufExceeded), errors.Is(err, nats.ErrStaleConnection),
		errors.Is(err, nats.ErrNoServers):
		e.Kind, e.Message = failure.Transient, "the bus connection was lost; reconnecting"
	case errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrStreamNotFound),
		errors.Is(err, jetstream.ErrBucketNotFound):
		e.Kind, e.Message, e.Err = failure.NotFound, "not found", fmt.Errorf("%w: %w", ErrNotFound, err)
	case errors.Is(err, jetstream.ErrKeyExists), errors.Is(err, jetstream.ErrKeyRevisionMismatch):
		e.Kind, e.Message, e.Err = failure.Conflict, "the key exists or its revision is stale; read it again", fmt.Errorf("%w: %w", ErrConflict, err)
	case errors.Is(err, jetstream.ErrInvalidKey), errors.Is(err, jetstream.ErrInvalidBucketName):
		e.Kind, e.Message = failure.InvalidArgs, "invalid key or bucket name"
	case errors.Is(err, jetstream.ErrJetStreamNotEnabled), errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount):
		e.Kind, e.Message = failure.Config, "JetStream is not enabled on the server"
	default:
		var api *jetstream.APIError
		if errors.As(err, &api) {
			if api.Code >= 500 || api.Code == 408 || api.Code == 503 {
				e.Kind = failure.Transient
			} else {
				e.Kind = failure.Protocol
			}
			e.Message = "JetStream refused the request"
			break
		}
		k := failure.KindOf(err)
		if k == failure.Unknown {
			k = failure.Transient
		}
		e.Kind = k
	}
	e.Retryable = e.Kind.Retryable()
	return e
}

// Fail builds a bus failure.
func Fail(kind failure.Kind, op string, err error, msg string) *failure.Error {
	return &failure.Error{Kind: kind, Source: failure.SourceBus, Op: op, Err: err, Message: msg, Retryable: kind.Retryable()}
}

// Wrap keeps a classified failure and fills in op and message.
func Wrap(err error, op, msg string) error {
	fe := failure.From(err)
	c := *fe
	if c.Source == "" {
		c.Source = failure.SourceBus
	}
	if c.Op == "" {
		c.Op = op
	}
	if c.Message == "" {
		c.Message = msg
	}
	return &c
}

// Conn classifies err like Classify, and says a timeout while the
// connection nc is down is what it is: a lost connection (Transient while
// reconnecting, Unavailable once closed).
func Conn(nc *nats.Conn, err error, op string) error {
	err = Classify(err, op)
	if err == nil || failure.KindOf(err) != failure.Timeout {
		return err
	}
	fe := *failure.From(err)
	switch {
	case nc.IsReconnecting():
		fe.Kind, fe.Message = failure.Transient, "the bus connection was lost; reconnecting"
	case nc.IsClosed():
		fe.Kind, fe.Message = failure.Unavailable, "the bus connection is closed"
	default:
		return err
	}
	fe.Retryable = fe.Kind.Retryable()
	return &fe
}

// Admin runs an administrative JetStream operation (create a stream or
// bucket) through policy. A cluster that is still electing its JetStream leader
// does not answer: each attempt is short, a timeout then is a transient
// failure, and attempts go on (through the policy) until ctx is done.
func Admin(ctx context.Context, policy failure.Policy, key failure.Key, op string, f func(context.Context) error) error {
	attempt := func(ctx context.Context) error {
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		err := f(actx)
		if err != nil && ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout)) {
			return &failure.Error{Kind: failure.Transient, Source: failure.SourceBus, Op: op, Err: err,
				Message: "JetStream did not answer (a cluster may still be electing its leader)"}
		}
		return Classify(err, op)
	}
	for {
		err := policy.Execute(ctx, key, attempt)
		if errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
			// The circuit opened on slow answers (a loaded or electing
			// server): an administrative call waits it out, to its context.
			t := time.NewTimer(250 * time.Millisecond)
			select {
			case <-ctx.Done():
				t.Stop()
				return err
			case <-t.C:
			}
			continue
		}
		if err == nil || ctx.Err() != nil || !failure.From(err).Retryable {
			return err
		}
	}
}
