package server

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/internal/lineconn"
)

// lineTransport serves one session over a stream, newline-delimited
// JSON-RPC, through internal/lineconn (the connection the Manager's client
// side uses) rather than go-sdk's stream connection, whose decoder
// allocates a fresh 32 KiB buffer for every value it decodes (three per
// request): on the gateway's stdio that garbage was a third of what a
// forwarded call allocated. Framing, the frame bound, batches (refused
// from 2025-06-18 on, as go-sdk refuses them) and Close are as go-sdk's.
type lineTransport struct {
	r        io.ReadCloser
	w        io.WriteCloser
	maxFrame int
	fast     *fastPath // forwards the calls it can (fast.go)
}

// Connect returns the connection; its Close closes the reader and the
// writer, as go-sdk's does.
func (t lineTransport) Connect(context.Context) (gomcp.Connection, error) {
	c := lineconn.New(t.r, t.w, lineconn.Options{MaxFrame: t.maxFrame, Peer: "client", Take: t.fast.take,
		Close: func() error { return errors.Join(t.r.Close(), t.w.Close()) }})
	t.fast.conn.Store(c)
	return c, nil
}

// streamTransport returns the line transport serving what t would serve
// (go-sdk's StdioTransport and IOTransport), with its fast path, or t
// itself and nil.
func (s *Server) streamTransport(t gomcp.Transport) (gomcp.Transport, *fastPath) {
	switch t := t.(type) {
	case *gomcp.StdioTransport:
		fp := newFastPath(s)
		return lineTransport{r: os.Stdin, w: nopWriteCloser{os.Stdout}, maxFrame: maxFrame(t.MaxLineLength), fast: fp}, fp
	case *gomcp.IOTransport:
		if t.Reader != nil && t.Writer != nil {
			fp := newFastPath(s)
			return lineTransport{r: t.Reader, w: t.Writer, maxFrame: maxFrame(t.MaxLineLength), fast: fp}, fp
		}
	}
	return t, nil
}

// maxFrame maps go-sdk's MaxLineLength (0: the default, negative: none)
// to lineconn's bound (0: none).
func maxFrame(maxLine int) int {
	switch {
	case maxLine == 0:
		return gomcp.DefaultMaxLineLength
	case maxLine < 0:
		return 0
	}
	return maxLine
}

// nopWriteCloser does not close stdout (go-sdk's StdioTransport does not).
// It passes write deadlines through, so that a write to a client that
// stopped reading is bounded where the writer supports deadlines.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// SetWriteDeadline sets the writer's deadline, if it has them.
func (w nopWriteCloser) SetWriteDeadline(t time.Time) error {
	if dl, ok := w.Writer.(interface{ SetWriteDeadline(time.Time) error }); ok {
		return dl.SetWriteDeadline(t)
	}
	return os.ErrNoDeadline
}
