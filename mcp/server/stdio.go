package server

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/mcp/internal/lineconn"
)

// lineTransport serves one session over a stream, newline-delimited
// JSON-RPC, through mcp/internal/lineconn (the connection the Manager's
// client side uses) rather than go-sdk's stream connection. Framing, the
// frame bound, batches (refused from 2025-06-18 on, as go-sdk refuses
// them) and Close are as go-sdk's; unlike go-sdk's, a write to a client
// that stopped reading is bounded where the writer has deadlines (the
// session then ends instead of hanging), and decoding does not allocate a
// fresh 32 KiB buffer for every value.
type lineTransport struct {
	r        io.ReadCloser
	w        io.WriteCloser
	maxFrame int
}

// Connect returns the connection; its Close closes the reader and the
// writer, as go-sdk's does.
func (t lineTransport) Connect(context.Context) (gomcp.Connection, error) {
	if f, ok := t.r.(keptFile); ok {
		_ = f.SetReadDeadline(time.Time{}) // an earlier session's Close set it
	}
	return lineconn.New(t.r, t.w, lineconn.Options{MaxFrame: t.maxFrame, Peer: "client",
		Close: func() error { return errors.Join(t.r.Close(), t.w.Close()) }}), nil
}

// streamTransport returns the line transport serving what t would serve
// (go-sdk's StdioTransport and IOTransport), or t itself.
func (s *Server) streamTransport(t gomcp.Transport) gomcp.Transport {
	switch t := t.(type) {
	case *gomcp.StdioTransport:
		in, out := stdioFiles()
		return lineTransport{r: keptFile{in}, w: keptFile{out}, maxFrame: maxFrame(t.MaxLineLength)}
	case *gomcp.IOTransport:
		if t.Reader != nil && t.Writer != nil {
			return lineTransport{r: t.Reader, w: t.Writer, maxFrame: maxFrame(t.MaxLineLength)}
		}
	}
	return t
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

// keptFile is the process's stdin or stdout as a session uses it: its
// Close leaves the file open for the process (and a later session) and
// ends a read in progress by a deadline in the past, where the file has
// deadlines. Its other methods are the file's: lineconn bounds its writes
// with the write deadline.
type keptFile struct{ *os.File }

// Close ends a read in progress and leaves the file open.
func (f keptFile) Close() error {
	_ = f.SetReadDeadline(time.Unix(1, 0))
	return nil
}
