package bus

import (
	"context"
	"errors"
	"fmt"
	"github.com/switchboard-dev/switchboard/bus/internal/wire"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/switchboard-dev/switchboard/failure"
)

// errNotFound is the cause of a typedKV failure of kind NotFound: a key that
// does not exist (callers test errors.Is(err, failure.NotFound)).
var errNotFound = errors.New("bus: key not found")

// errConflict is the cause of a typedKV failure of kind Conflict: a create of
// an existing key or an update with a stale revision (callers test
// errors.Is(err, failure.Conflict)).
var errConflict = errors.New("bus: revision conflict")

// classify maps an error of nats.go or jetstream to the failure taxonomy.
// It returns nil for nil, and *failure.Error values unchanged.
func classify(err error, op string) error {
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
		e.Kind, e.Message, e.Err = failure.NotFound, "not found", fmt.Errorf("%w: %w", errNotFound, err)
	case errors.Is(err, jetstream.ErrKeyExists), errors.Is(err, jetstream.ErrKeyRevisionMismatch):
		e.Kind, e.Message, e.Err = failure.Conflict, "the key exists or its revision is stale; read it again", fmt.Errorf("%w: %w", errConflict, err)
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

// protocolError is a malformed or wrong-version payload.
func protocolError(op string, err error) *failure.Error { return wire.ProtocolError(op, err) }

// fail builds a bus failure.
func (b *Bus) fail(kind failure.Kind, op string, err error, msg string) *failure.Error {
	return &failure.Error{Kind: kind, Source: failure.SourceBus, Op: op, Err: err, Message: msg, Retryable: kind.Retryable()}
}

// wrap keeps a classified failure and fills in op and message.
func (b *Bus) wrap(err error, op, msg string) error {
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

// classifyConn classifies err like classify, and says a timeout while the
// connection is down is what it is: a lost connection (Transient while
// reconnecting, Unavailable once closed).
func (b *Bus) classifyConn(err error, op string) error {
	err = classify(err, op)
	if err == nil || failure.KindOf(err) != failure.Timeout {
		return err
	}
	fe := *failure.From(err)
	switch {
	case b.nc.IsReconnecting():
		fe.Kind, fe.Message = failure.Transient, "the bus connection was lost; reconnecting"
	case b.nc.IsClosed():
		fe.Kind, fe.Message = failure.Unavailable, "the bus connection is closed"
	default:
		return err
	}
	fe.Retryable = fe.Kind.Retryable()
	return &fe
}

// Classify maps an error of the connection (Conn) to the failure taxonomy
// the way the bus's own requests do, for packages that use Conn directly
// (bus/worker): no responders is Unavailable, a deadline Timeout (Transient
// while the connection is reconnecting, Unavailable once it is closed), a
// cancelled context Canceled, a lost connection Transient. It returns nil
// for nil and a *failure.Error unchanged; op names the operation.
func (b *Bus) Classify(err error, op string) error { return b.classifyConn(err, op) }
