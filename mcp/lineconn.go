package mcp

import (
	"io"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/switchboard-dev/switchboard/mcp/internal/lineconn"
)

// clientHooks are what the Manager adds to its line connection to a
// server (mcp/internal/lineconn): a stdio server's nudger, whose ping answers
// are dropped; the bounded queue of the server's log and progress
// notifications (noteQueue); and the coalescing of its change
// notifications (coalescer), ahead of go-sdk's unbounded queue. Any may be
// nil.
type clientHooks struct {
	nudge    *nudger
	notes    *noteQueue
	coalesce *coalescer
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
