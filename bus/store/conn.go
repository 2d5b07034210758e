package store

import (
	"context"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/internal/jsfail"
	"github.com/switchboard-dev/switchboard/bus/internal/wire"
	"github.com/switchboard-dev/switchboard/failure"
)

// jsConn is what the stores use of a bus: its connection and JetStream
// context, its failure policy, and a logger.
type jsConn struct {
	nc     *nats.Conn
	js     jetstream.JetStream
	policy failure.Policy
	log    zerolog.Logger
	stream string
}

// connOf is b's connection for the stores, under policy (nil:
// failure.Default, asked at each use), logging to l (nil: nowhere).
func connOf(b *bus.Bus, policy failure.Policy, l *zerolog.Logger) *jsConn {
	c := &jsConn{nc: b.Conn(), js: b.JetStream(), policy: policy, log: zerolog.Nop(), stream: b.StreamName()}
	if l != nil {
		c.log = l.With().Str("component", "store").Logger()
	}
	return c
}

// pol is the stores' policy: their Config's, else the default.
func (b *jsConn) pol() failure.Policy { return failure.Or(b.policy) }

func (b *jsConn) fail(kind failure.Kind, op string, err error, msg string) *failure.Error {
	return jsfail.Fail(kind, op, err, msg)
}

func (b *jsConn) wrap(err error, op, msg string) error { return jsfail.Wrap(err, op, msg) }

func (b *jsConn) classifyConn(err error, op string) error { return jsfail.Conn(b.nc, err, op) }

func (b *jsConn) jetStreamAdmin(ctx context.Context, key failure.Key, op string, f func(context.Context) error) error {
	return jsfail.Admin(ctx, b.pol(), key, op, f)
}

func classify(err error, op string) error { return jsfail.Classify(err, op) }

func protocolError(op string, err error) *failure.Error { return wire.ProtocolError(op, err) }

// bucketPrefix is name made a valid JetStream name: upper case, letters,
// digits, - and _ (anything else becomes _).
func bucketPrefix(name string) string {
	var sb strings.Builder
	for _, r := range strings.ToUpper(name) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '-' || r == '_' {
			sb.WriteRune(r)
		} else {
			sb.WriteByte('_')
		}
	}
	return sb.String()
}
