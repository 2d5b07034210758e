package mcp

import (
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/switchboard-dev/switchboard/internal/lineconn"
)

// clientHooks are what the Manager adds to its line connection to a
// server (internal/lineconn): a stdio server's nudger, whose ping answers
// are dropped; the bounded queue of the server's log and progress
// notifications (noteQueue); and the coalescing of its change
// notifications (coalescer), ahead of go-sdk's unbounded queue. Any may be
// nil.
type clientHooks struct {
	nudge    *nudger
	notes    *noteQueue
	coalesce *coalescer
	// take answers the forwarder's own calls (forward.go) off the raw
	// frame; resp is the ID of the response it took, if it took one.
	take func(frame []byte) (resp jsonrpc.ID, taken bool)
	// failed learns of the error that ended reading (forward.go).
	failed func(error)
}

// newClientConn is the Manager's connection to a server over r and w.
func newClientConn(r io.Reader, w io.Writer, o lineconn.Options, h clientHooks) *lineconn.Conn {
	closeFn := o.Close
	o.Close = func() error {
		if h.nudge != nil {
			h.nudge.stop()
		}
		if h.notes != nil {
			h.notes.stop()
		}
		if closeFn != nil {
			return closeFn()
		}
		return nil
	}
	o.Drop = h.drop
	o.ReadFailed = h.failed
	if h.take != nil {
		o.Take = func(frame []byte) bool {
			id, ok := h.take(frame)
			if ok && h.nudge != nil {
				h.nudge.took(id)
			}
			return ok
		}
	}
	if h.nudge != nil {
		o.Wrote = h.nudge.wrote
	}
	c := lineconn.New(r, w, o)
	if h.nudge != nil {
		h.nudge.c = c // before the first Write can arm it
	}
	return c
}

// drop reports whether msg is taken off the stream before go-sdk sees it.
func (h clientHooks) drop(msg jsonrpc.Message) bool {
	switch {
	case h.nudge != nil && h.nudge.read(msg):
		return true
	case h.notes != nil && h.notes.offer(msg):
		return true
	case h.coalesce != nil && h.coalesce.drop(msg):
		return true
	}
	return false
}
