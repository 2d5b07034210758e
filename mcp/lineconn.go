package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/switchboard-dev/switchboard/agent/failure"
)

// lineConn is the client's end of a newline-delimited JSON-RPC stream (a
// stdio server's stdout and stdin, or a pipe to an in-process server). It
// does what go-sdk's own stream connection does (framing, a bound on one
// frame's size, JSON-RPC batches, a Close that unblocks Read) but decodes
// each message with one pass of encoding/json: go-sdk's decoder allocates
// a fresh 32 KiB buffer for every value it decodes, two or three per
// message, which made that garbage most of what a tool call allocated.
//
// Unlike go-sdk's, every write is bounded (see writeLine) and a write cut
// short breaks the connection and kills the peer; a client's log and
// progress notifications go to a bounded queue of its own (noteQueue) and
// its change notifications are coalesced (coalescer), ahead of go-sdk's
// unbounded queue; and batches are refused from protocol revision
// 2025-06-18 on (versionGate).
type lineConn struct {
	w       io.Writer
	dl      writeDeadliner // w's deadlines; nil if it has none
	closeFn func() error
	// kill ends the peer at once (a stdio server: SIGKILL to its process
	// group) when the stream broke; nil: closeFn is used.
	kill func()
	// stall bounds how long one write may make no progress (default
	// writeStall).
	stall time.Duration

	incoming chan frame
	closed   chan struct{}

	closeOnce sync.Once
	closeErr  error

	writeSem chan struct{} // one writer at a time; waiting ends with ctx

	brokeOnce sync.Once
	broken    chan struct{} // closed once a write failed part way or stalled
	brokeErr  error

	gate  versionGate // refuses batches from 2025-06-18 on
	notes *noteQueue  // the client's log and progress notifications; nil: go-sdk's queue
	// coalesce drops change notifications like one still in go-sdk's
	// queue; nil: none dropped.
	coalesce *coalescer

	queue []jsonrpc.Message // the rest of the last batch; Reads are serial

	batchMu   sync.Mutex
	batches   map[jsonrpc.ID]*inBatch // requests that came in a batch, by ID
	batchNote bool                    // a batch held a notification (see trackBatch)

	nudge *nudger // a stdio server's; nil on a pipe
}

// frame is one JSON value read off the stream, or the error that ended it.
type frame struct {
	data json.RawMessage
	err  error
}

// inBatch is a batch of requests from the peer: JSON-RPC answers a batch
// with one array once every request in it has its response.
type inBatch struct {
	pending   map[jsonrpc.ID]int
	responses []*jsonrpc.Response
}

// newLineConn reads frames from r (at most maxFrame bytes each, no bound
// if negative) on a goroutine that ends when r fails or the connection is
// closed, writes to w, and calls closeFn once on Close.
func newLineConn(r io.Reader, w io.Writer, closeFn func() error, maxFrame int) *lineConn {
	c := &lineConn{w: w, closeFn: closeFn, incoming: make(chan frame), closed: make(chan struct{}),
		writeSem: make(chan struct{}, 1), broken: make(chan struct{}), stall: writeStall}
	c.dl, _ = w.(writeDeadliner)
	go c.readLoop(r, maxFrame)
	return c
}

// readLoop decodes one JSON value at a time, as go-sdk does: a value may
// span lines, and what follows it on its line must be its line's end. It
// stops at the first error, after handing it to Read, or when the
// connection closes. A Read blocked in r that never returns after Close
// (a pipe nobody closes) keeps this goroutine, as in go-sdk.
func (c *lineConn) readLoop(r io.Reader, maxFrame int) {
	var limiter *frameLimit
	if maxFrame > 0 {
		limiter = &frameLimit{r: r, limit: maxFrame}
		r = limiter
	}
	dec := json.NewDecoder(r)
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == nil {
			var next [1]byte
			if n, rerr := dec.Buffered().Read(next[:]); n > 0 {
				if next[0] != '\n' && next[0] != '\r' {
					err = errTrailingData
				}
			} else if rerr != nil && rerr != io.EOF {
				err = rerr
			}
		}
		if limiter != nil && errors.Is(err, errFrameTooLarge) {
			err = protocolErr(fmt.Errorf("%w (%d bytes)", errFrameTooLarge, maxFrame))
		} else if err != nil && isProtocolBreak(err) {
			err = protocolErr(err) // not JSON, or trailing data
		}
		select {
		case c.incoming <- frame{data: raw, err: err}:
		case <-c.closed:
			return
		}
		if err != nil {
			return
		}
		if limiter != nil {
			limiter.count = 0
		}
	}
}

// Read returns the next message: the rest of a batch first, then the next
// frame. The answers to a nudger's pings are dropped, and log and progress
// notifications go to the connection's own bounded queue when it has one.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.read(ctx)
		if err != nil {
			return nil, err
		}
		if c.nudge != nil && c.nudge.read(msg) {
			continue
		}
		c.gate.saw(msg)
		if c.notes != nil && c.notes.offer(msg) {
			continue
		}
		if c.coalesce != nil && c.coalesce.drop(msg) {
			continue
		}
		return msg, nil
	}
}

func (c *lineConn) read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.queue) > 0 {
		next := c.queue[0]
		c.queue = c.queue[1:]
		return next, nil
	}
	var data []byte
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case f := <-c.incoming:
		if f.err != nil {
			return nil, f.err
		}
		data = f.data
	case <-c.closed:
		return nil, c.endErr(io.EOF)
	case <-c.broken:
		return nil, c.brokeErr
	}
	msgs, batch, err := decodeFrame(data)
	if err != nil {
		return nil, protocolErr(err)
	}
	if batch {
		if err := c.gate.allowBatch(); err != nil {
			return nil, protocolErr(err)
		}
		if err := c.trackBatch(msgs); err != nil {
			return nil, protocolErr(err)
		}
	}
	c.queue = msgs[1:]
	return msgs[0], nil
}

// trackBatch records the requests of an incoming batch, so that their
// responses go back as one array.
//
// It refuses what go-sdk's stream connection refuses: a batch repeating a
// request ID, or one still being answered; and, because go-sdk files a
// notification in a batch under the zero ID and never drops it, a batch
// holding two notifications, and any batch holding one after the first
// such batch. Unlike go-sdk, it still answers the calls of a batch that
// holds a notification (go-sdk waits for the notification's answer).
func (c *lineConn) trackBatch(msgs []jsonrpc.Message) error {
	var b *inBatch
	notes := 0
	for _, m := range msgs {
		req, ok := m.(*jsonrpc.Request)
		if !ok {
			continue
		}
		if !req.ID.IsValid() {
			if notes++; notes > 1 {
				return errors.New("a JSON-RPC batch holds more than one notification (go-sdk takes them for a repeated ID)")
			}
			continue
		}
		if b == nil {
			b = &inBatch{pending: map[jsonrpc.ID]int{}}
		}
		if _, dup := b.pending[req.ID]; dup {
			return fmt.Errorf("a JSON-RPC batch repeats the request ID %v", req.ID.Raw())
		}
		b.pending[req.ID] = len(b.responses)
		b.responses = append(b.responses, nil)
	}
	if b == nil && notes == 0 {
		return nil
	}
	c.batchMu.Lock()
	defer c.batchMu.Unlock()
	if notes > 0 && c.batchNote {
		return errors.New("a JSON-RPC batch holds a notification after an earlier batch did (go-sdk takes it for a repeated ID)")
	}
	if b != nil {
		for id := range b.pending {
			if _, dup := c.batches[id]; dup {
				return fmt.Errorf("a JSON-RPC batch repeats the ID %v of a request still being answered", id.Raw())
			}
		}
	}
	c.batchNote = c.batchNote || notes > 0
	if b == nil {
		return nil
	}
	if c.batches == nil {
		c.batches = map[jsonrpc.ID]*inBatch{}
	}
	for id := range b.pending {
		c.batches[id] = b
	}
	return nil
}

// answerBatch files resp in its batch, if it answers a batched request,
// and returns the whole batch's responses once the last one is in.
func (c *lineConn) answerBatch(resp *jsonrpc.Response) (all []*jsonrpc.Response, batched bool) {
	c.batchMu.Lock()
	defer c.batchMu.Unlock()
	b, ok := c.batches[resp.ID]
	if !ok {
		return nil, false
	}
	b.responses[b.pending[resp.ID]] = resp
	delete(b.pending, resp.ID)
	delete(c.batches, resp.ID)
	if len(b.pending) > 0 {
		return nil, true
	}
	return b.responses, true
}

// Write sends one message as one line (or, for the last response of an
// incoming batch, the batch's array of responses).
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var data []byte
	var err error
	if resp, ok := msg.(*jsonrpc.Response); ok {
		if all, batched := c.answerBatch(resp); batched {
			if all == nil {
				return nil
			}
			data, err = encodeBatch(all)
		}
	}
	if data == nil && err == nil {
		data, err = jsonrpc.EncodeMessage(msg)
	}
	if err != nil {
		return fmt.Errorf("encoding a JSON-RPC message: %w", err)
	}
	if c.nudge != nil {
		c.nudge.wrote(msg) // before the answer can be read
	}
	c.gate.saw(msg)
	return c.writeLine(ctx, append(data, '\n'))
}

func encodeBatch(resps []*jsonrpc.Response) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, r := range resps {
		data, err := jsonrpc.EncodeMessage(r)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(data)
	}
	buf.WriteByte(']')
	return buf.Bytes(), nil
}

// Close closes the stream once (for a stdio server: stdin, then the
// shutdown sequence) and unblocks Read.
func (c *lineConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		if c.dl != nil {
			// A write blocked on a peer that stopped reading ends now.
			_ = c.dl.SetWriteDeadline(aLongTimeAgo)
		}
		if c.nudge != nil {
			c.nudge.stop()
		}
		if c.notes != nil {
			c.notes.stop()
		}
		if c.closeFn != nil {
			c.closeErr = c.closeFn()
		}
	})
	return c.closeErr
}

// SessionID is empty: a stream has no session ID.
func (c *lineConn) SessionID() string { return "" }

// isProtocolBreak reports whether a read error means the peer broke the
// framing (not JSON, or more after a message on its line) rather than the
// stream ending or failing.
func isProtocolBreak(err error) bool {
	var se *json.SyntaxError
	return errors.As(err, &se) || errors.Is(err, errTrailingData)
}

// errTrailingData is the error of a message followed by more on its line.
var errTrailingData = errors.New("invalid trailing data after a JSON-RPC message")

// protocolErr marks err as the peer breaking the protocol (a frame that is
// not JSON-RPC, too large, or a batch where none is allowed): the
// connection ends, and a call in flight fails with kind Protocol.
func protocolErr(err error) error {
	var fe *failure.Error
	if errors.As(err, &fe) {
		return err
	}
	return &failure.Error{Kind: failure.Protocol, Source: failure.SourceMCP, Op: "read",
		Message: "the server wrote something that is not a valid MCP message; the connection is being restarted", Err: err}
}

// errFrameTooLarge is the error of a frame over the size bound.
var errFrameTooLarge = errors.New("a JSON-RPC message from the server exceeds the size limit")

// frameLimit fails a read once one frame has used up its byte budget.
type frameLimit struct {
	r     io.Reader
	limit int
	count int
}

func (f *frameLimit) Read(p []byte) (int, error) {
	if f.count >= f.limit {
		return 0, errFrameTooLarge
	}
	if len(p) > f.limit-f.count {
		p = p[:f.limit-f.count]
	}
	n, err := f.r.Read(p)
	f.count += n
	return n, err
}
