// Package lineconn is a newline-delimited JSON-RPC connection (go-sdk's
// mcp.Connection) shared by both ends Switchboard speaks on a stream: the
// Manager's client side of a stdio or in-process server (package mcp) and
// the served side of mcp/server on stdio. It does what go-sdk's own stream
// connection does (framing, a bound on one frame's size, JSON-RPC batches,
// a Close that unblocks Read) but reads a frame a line at a time, checked
// by one fast validating pass (frameReader), decodes each message without
// go-sdk's per-value buffers, bounds every write to a writer with working
// deadlines, and refuses batches from protocol revision 2025-06-18 on at
// either end.
package lineconn

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

	"github.com/switchboard-dev/switchboard/failure"
)

// Conn is one end of a newline-delimited JSON-RPC stream (a stdio
// server's stdout and stdin, a pipe to an in-process server, or a served
// process's stdin and stdout). It does what go-sdk's own stream connection
// does (framing, a bound on one frame's size, JSON-RPC batches, a Close
// that unblocks Read) but frames the stream a line at a time, each line
// checked by one fast validating pass (frameReader), and decodes each
// message with one pass: go-sdk's decoder allocates a fresh 32 KiB buffer
// for every value it decodes, two or three per message, which made that
// garbage most of what a tool call allocated.
//
// Unlike go-sdk's, every write to a writer whose deadlines work (a pipe
// in the netpoller, a net.Conn) is bounded (see writeLine), and a write
// cut short breaks the connection and ends the peer (Options.Kill); batches
// are refused from protocol revision 2025-06-18 on (versionGate); and the
// owner may drop messages read (Options.Drop: the Manager's bounded
// notification queue and coalescing, a nudger's ping answers).
type Conn struct {
	w       io.Writer
	dl      writeDeadliner // w's deadlines; nil if it has none
	closeFn func() error
	// kill ends the peer at once (a stdio server: SIGKILL to its process
	// group) when the stream broke; nil: closeFn is used.
	kill func()
	// stall bounds how long one write may make no progress (default
	// writeStall).
	stall time.Duration
	words wording
	drop  func(jsonrpc.Message) bool
	wrote func(jsonrpc.Message)

	incoming chan frame
	closed   chan struct{}

	closeOnce sync.Once
	closeErr  error

	writeSem chan struct{} // one writer at a time; waiting ends with ctx

	brokeOnce sync.Once
	broken    chan struct{} // closed once a write failed part way or stalled
	brokeErr  error

	gate versionGate // refuses batches from 2025-06-18 on

	queue []jsonrpc.Message // the rest of the last batch; Reads are serial

	batchMu   sync.Mutex
	batches   map[jsonrpc.ID]*inBatch // requests that came in a batch, by ID
	batchNote bool                    // a batch held a notification (see trackBatch)
}

// Options configure a Conn. Zero values mean the defaults shown.
type Options struct {
	// MaxFrame bounds one frame's size in bytes (0: no bound).
	MaxFrame int
	// Close is called once by Close, after Read was unblocked (nil:
	// nothing more is done).
	Close func() error
	// Kill ends the peer at once when a write broke the stream (half a
	// message written, or the peer stopped reading); nil: Close is used.
	Kill func()
	// Stall bounds how long one write may make no progress (default 10 s).
	Stall time.Duration
	// Peer names the other end in errors: "server" (the default: the
	// peer is restarted) or "client" (the session ends).
	Peer string
	// Drop is called with each message read, after the handshake gate saw
	// it; true drops it (Read goes on to the next).
	Drop func(jsonrpc.Message) bool
	// Wrote is called with each message about to be written.
	Wrote func(jsonrpc.Message)
}

// frame is one JSON value read off the stream, or the error that ended it.
type frame struct {
	data  json.RawMessage
	valid bool // data is known to be valid JSON
	err   error
}

// inBatch is a batch of requests from the peer: JSON-RPC answers a batch
// with one array once every request in it has its response.
type inBatch struct {
	pending   map[jsonrpc.ID]int
	responses []*jsonrpc.Response
}

// New reads frames from r on a goroutine that ends when r fails or the
// connection is closed, and writes to w.
func New(r io.Reader, w io.Writer, o Options) *Conn {
	c := &Conn{w: w, closeFn: o.Close, kill: o.Kill, stall: o.Stall, words: wordsFor(o.Peer), drop: o.Drop, wrote: o.Wrote,
		incoming: make(chan frame), closed: make(chan struct{}), writeSem: make(chan struct{}, 1), broken: make(chan struct{})}
	if c.stall <= 0 {
		c.stall = writeStall
	}
	if dl, ok := w.(writeDeadliner); ok && dl.SetWriteDeadline(time.Time{}) == nil {
		// Only a writer whose deadlines work (an *os.File not in the
		// netpoller, such as a blocking stdout, has the method but fails).
		c.dl = dl
	}
	go c.readLoop(r, o.MaxFrame)
	return c
}

// Done is closed once Close was called.
func (c *Conn) Done() <-chan struct{} { return c.closed }

// readLoop reads one JSON value at a time (frameReader), as go-sdk does:
// a value may span lines, and what follows it on its line must be its
// line's end. It stops at the first error, after handing it to Read, or
// when the connection closes. A Read blocked in r that never returns after
// Close (a pipe nobody closes) keeps this goroutine, as in go-sdk.
func (c *Conn) readLoop(r io.Reader, maxFrame int) {
	fr := newFrameReader(r, maxFrame)
	for {
		raw, valid, err := fr.next()
		if valid {
			raw = bytes.Clone(raw) // it aliases the reader's buffer
		}
		if maxFrame > 0 && errors.Is(err, errFrameTooLarge) {
			err = c.protocolErr(fmt.Errorf("a JSON-RPC message from the %s exceeds the size limit (%d bytes)", c.words.peer, maxFrame))
		} else if err != nil && isProtocolBreak(err) {
			err = c.protocolErr(err) // not JSON, or trailing data
		}
		select {
		case c.incoming <- frame{data: raw, valid: valid, err: err}:
		case <-c.closed:
			return
		}
		if err != nil {
			return
		}
	}
}

// Read returns the next message: the rest of a batch first, then the next
// frame. Messages Options.Drop takes are not returned.
func (c *Conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.read(ctx)
		if err != nil {
			return nil, err
		}
		c.gate.saw(msg)
		if c.drop != nil && c.drop(msg) {
			continue
		}
		return msg, nil
	}
}

func (c *Conn) read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.queue) > 0 {
		next := c.queue[0]
		c.queue = c.queue[1:]
		return next, nil
	}
	var data []byte
	var valid bool
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case f := <-c.incoming:
		if f.err != nil {
			return nil, f.err
		}
		data, valid = f.data, f.valid
	case <-c.closed:
		return nil, c.endErr(io.EOF)
	case <-c.broken:
		return nil, c.brokeErr
	}
	msgs, batch, err := decodeFrame(data, valid)
	if err != nil {
		return nil, c.protocolErr(err)
	}
	if batch {
		if err := c.gate.allowBatch(); err != nil {
			return nil, c.protocolErr(err)
		}
		if err := c.trackBatch(msgs); err != nil {
			return nil, c.protocolErr(err)
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
func (c *Conn) trackBatch(msgs []jsonrpc.Message) error {
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
func (c *Conn) answerBatch(resp *jsonrpc.Response) (all []*jsonrpc.Response, batched bool) {
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
func (c *Conn) Write(ctx context.Context, msg jsonrpc.Message) error {
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
	if c.wrote != nil {
		c.wrote(msg) // before the answer can be read
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

// Close unblocks Read and ends writes once, then calls Options.Close (for
// a stdio server: close its stdin, then the shutdown sequence).
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		if c.dl != nil {
			// A write blocked on a peer that stopped reading ends now.
			_ = c.dl.SetWriteDeadline(aLongTimeAgo)
		}
		if c.closeFn != nil {
			c.closeErr = c.closeFn()
		}
	})
	return c.closeErr
}

// SessionID is empty: a stream has no session ID.
func (c *Conn) SessionID() string { return "" }

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
func (c *Conn) protocolErr(err error) error {
	var fe *failure.Error
	if errors.As(err, &fe) {
		return err
	}
	return &failure.Error{Kind: failure.Protocol, Source: failure.SourceMCP, Op: "read", Message: c.words.protocol, Err: err}
}

// errFrameTooLarge is the error of a frame over the size bound.
var errFrameTooLarge = errors.New("a JSON-RPC message exceeds the size limit")

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

// wording is how a Conn's errors name its peer and what happens to it.
type wording struct {
	peer     string // "server" or "client"
	protocol string // the peer wrote something that is not JSON-RPC
	stalled  string // the peer stopped reading (a format taking the stall bound)
	cutShort string // a write ended part way
}

func wordsFor(peer string) wording {
	if peer == "client" {
		return wording{peer: "client",
			protocol: "the client wrote something that is not a valid MCP message; the session ends",
			stalled:  "the client stopped reading its input (nothing accepted for %s); the session ends",
			cutShort: "a message to the client was cut short, which leaves its input unusable; the session ends"}
	}
	return wording{peer: "server",
		protocol: "the server wrote something that is not a valid MCP message; the connection is being restarted",
		stalled:  "the server stopped reading its input (nothing accepted for %s); it is being killed and restarted",
		cutShort: "a message to the server was cut short, which leaves its input unusable; it is being killed and restarted"}
}
