package bus

import (
	"github.com/switchboard-dev/switchboard/bus/internal/jsfail"
	"github.com/switchboard-dev/switchboard/bus/internal/wire"
	"github.com/switchboard-dev/switchboard/failure"
)

// classify maps an error of nats.go or jetstream to the failure taxonomy.
// It returns nil for nil, and *failure.Error values unchanged.
func classify(err error, op string) error { return jsfail.Classify(err, op) }

// protocolError is a malformed or wrong-version payload.
func protocolError(op string, err error) *failure.Error { return wire.ProtocolError(op, err) }

// fail builds a bus failure.
func (b *Bus) fail(kind failure.Kind, op string, err error, msg string) *failure.Error {
	return jsfail.Fail(kind, op, err, msg)
}

// wrap keeps a classified failure and fills in op and message.
func (b *Bus) wrap(err error, op, msg string) error { return jsfail.Wrap(err, op, msg) }

// classifyConn classifies err like classify, and says a timeout while the
// connection is down is what it is: a lost connection.
func (b *Bus) classifyConn(err error, op string) error { return jsfail.Conn(b.nc, err, op) }

// Classify maps an error of the connection (Conn) to the failure taxonomy
// the way the bus's own requests do, for packages that use Conn directly
// (bus/worker): no responders is Unavailable, a deadline Timeout (Transient
// while the connection is reconnecting, Unavailable once it is closed), a
// cancelled context Canceled, a lost connection Transient. It returns nil
// for nil and a *failure.Error unchanged; op names the operation.
func (b *Bus) Classify(err error, op string) error { return b.classifyConn(err, op) }
