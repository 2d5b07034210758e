package lineconn

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/failure"
)

// writeStall is how long one write to a peer may make no progress before
// the peer is taken to have stopped reading: the connection breaks and a
// stdio server is killed (and then restarted like one that crashed).
const writeStall = 10 * time.Second

// writeChunk is the most written under one deadline, so that a large
// message to a slow but reading peer is not cut short by the stall bound.
const writeChunk = 64 << 10

// aLongTimeAgo is a deadline in the past: it ends a blocked write at once.
var aLongTimeAgo = time.Unix(1, 0)

// writeDeadliner is what a stream must offer for its writes to be bounded:
// an *os.File pipe (pollable, as exec's and os.Pipe's are on Linux and the
// BSDs) or a net.Conn.
type writeDeadliner interface {
	SetWriteDeadline(time.Time) error
}

// writeLine writes one line. It waits for the writer's turn no longer than
// ctx allows; the write itself ends when ctx is done, at ctx's deadline, or
// when writeStall passes with no byte accepted. A write that ends part way
// (the stream now holds half a message) or stalls breaks the connection:
// the peer is killed, Read fails, and every later Write fails at once.
func (c *Conn) writeLine(ctx context.Context, data []byte) error {
	select {
	case c.writeSem <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("writing to the %s: %w", c.words.peer, ctx.Err())
	case <-c.closed:
		return c.endErr(gomcp.ErrConnectionClosed)
	case <-c.broken:
		return c.brokeErr
	}
	defer func() { <-c.writeSem }()
	select {
	case <-c.closed:
		return c.endErr(gomcp.ErrConnectionClosed)
	case <-c.broken:
		return c.brokeErr
	default:
	}
	if c.dl == nil {
		_, err := c.w.Write(data)
		return err
	}
	written, stalled, err := c.writeBounded(ctx, data)
	if err == nil {
		return nil
	}
	select {
	case <-c.closed:
		return c.endErr(gomcp.ErrConnectionClosed)
	default:
	}
	switch {
	case ctx.Err() != nil:
		err = fmt.Errorf("writing to the %s: %w", c.words.peer, ctx.Err())
	case stalled:
		err = &failure.Error{Kind: failure.Unavailable, Source: failure.SourceMCP, Op: "write",
			Message: fmt.Sprintf(c.words.stalled, c.stall), Err: err}
	}
	switch {
	case stalled:
		c.breakConn(err)
	case written > 0:
		c.breakConn(&failure.Error{Kind: failure.Unavailable, Source: failure.SourceMCP, Op: "write",
			Message: c.words.cutShort, Err: err})
	}
	return err
}

// writeBounded writes data in chunks, each under a deadline of ctx's
// deadline or the stall bound, whichever is first; ctx's end sets the
// deadline to the past. It reports the bytes written and whether the last
// chunk ran out of time on the stall bound.
func (c *Conn) writeBounded(ctx context.Context, data []byte) (written int, stalled bool, err error) {
	var mu sync.Mutex
	done := false
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		done = true
		_ = c.dl.SetWriteDeadline(aLongTimeAgo)
		mu.Unlock()
	})
	defer stop()
	ctxDeadline, hasDeadline := ctx.Deadline()
	for written < len(data) {
		mu.Lock()
		if done {
			mu.Unlock()
			return written, false, ctx.Err()
		}
		d := time.Now().Add(c.stall)
		byStall := true
		if hasDeadline && ctxDeadline.Before(d) {
			d, byStall = ctxDeadline, false
		}
		if err := c.dl.SetWriteDeadline(d); err != nil {
			mu.Unlock()
			return written, false, err
		}
		mu.Unlock()
		end := min(len(data), written+writeChunk)
		n, err := c.w.Write(data[written:end])
		written += n
		if err != nil {
			return written, byStall && errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() == nil, err
		}
	}
	return written, false, nil
}

// breakConn marks the connection broken by err and ends the peer: a
// stream with half a message in it, or a peer that does not read, cannot
// be used again.
func (c *Conn) breakConn(err error) {
	c.brokeOnce.Do(func() {
		c.brokeErr = err
		close(c.broken)
		if c.kill != nil {
			c.kill()
		} else {
			_ = c.Close() // a pipe: closing it does not block
		}
	})
}

// WriteLine writes one raw line (data ends with a newline), bounded as a
// Write is: for messages the connection's owner makes itself (a nudger's
// ping).
func (c *Conn) WriteLine(ctx context.Context, data []byte) error { return c.writeLine(ctx, data) }

// Writing reports whether a write holds the writer's turn, so that a
// later write waits for it (a test's condition for "a write is stuck").
func (c *Conn) Writing() bool { return len(c.writeSem) > 0 }

// Broken reports whether a write broke the connection.
func (c *Conn) Broken() bool {
	select {
	case <-c.broken:
		return true
	default:
		return false
	}
}

// endErr is the error of a closed connection: why it broke, if it did,
// or else closed.
func (c *Conn) endErr(closed error) error {
	if c.Broken() {
		return c.brokeErr
	}
	return closed
}
