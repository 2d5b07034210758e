package server

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// primeHold is how long a POST's response stream may hold its priming
// event back (heldFlush); held events are flushed by one goroutine of the
// server's, which looks every primeHold while some are held.
const primeHold = 10 * time.Millisecond

// holdFlushes serves h with every POST's response writer a heldFlush, so
// that a call answered at once costs one write to the connection, not
// three.
func (s *Server) holdFlushes(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		hw := &heldFlush{ResponseWriter: w, flusher: &s.flusher}
		// go-sdk bounds the body by the same limit, but with the writer it
		// is given: bounded here with net/http's own, a body over it still
		// makes net/http close the connection after the 413.
		body := &firstByte{ReadCloser: http.MaxBytesReader(w, r.Body, gomcp.DefaultMaxRequestBodyBytes)}
		r.Body, hw.body = body, body
		defer hw.end()
		h.ServeHTTP(hw, r)
	})
}

// heldFlush is the response writer of a POST whose stream go-sdk writes:
// it writes the priming event (an event id for resumption, before the call
// runs) and flushes it, then the call's response and flushes it, and then
// net/http ends the chunked body: three writes to the connection for a
// call answered at once. heldFlush holds back the flush after the priming
// event until the next event, the handler's end or primeHold (the
// server's flusher), and, unless the request was a batch, the flush after a
// JSON-RPC response until the handler's end, when net/http writes the rest
// of the body at once; a notification or request to the client is flushed
// at once, with whatever is held. Events are written as go-sdk writes them;
// only when they reach the connection changes.
type heldFlush struct {
	http.ResponseWriter
	flusher *flusher
	body    *firstByte // the request's body, to tell a batch
	mu      sync.Mutex
	last    eventKind // of the last event written
	held    time.Time // when the flush after a priming event was held back (zero: none is)
	ended   bool      // the handler returned: the writer is net/http's again
}

// eventKind is what an event written to a response stream is.
type eventKind int

const (
	eventOther    eventKind = iota
	eventPrime              // go-sdk's priming event
	eventResponse           // a JSON-RPC response
)

func (w *heldFlush) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.last = kindOf(p)
	return w.ResponseWriter.Write(p)
}

func (w *heldFlush) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ResponseWriter.WriteHeader(code)
}

// FlushError flushes, or holds the flush back after a priming event or
// a response.
func (w *heldFlush) FlushError() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended {
		return nil
	}
	switch {
	case w.last == eventPrime:
		if w.held.IsZero() {
			w.held = time.Now()
			w.flusher.hold(w)
		}
		return nil
	case w.last == eventResponse && w.body.first != '[':
		return nil // the handler's end flushes it
	}
	w.held = time.Time{}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *heldFlush) Flush() { _ = w.FlushError() }

// Unwrap is the writer underneath, for http.ResponseController.
func (w *heldFlush) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// flushHeld flushes the priming event held back since before cutoff;
// it reports whether w is done with (flushed or ended).
func (w *heldFlush) flushHeld(cutoff time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended || w.held.IsZero() {
		return true
	}
	if w.held.After(cutoff) {
		return false
	}
	w.held = time.Time{}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
	return true
}

// end is the handler's end: net/http flushes what is held with the end of
// the body.
func (w *heldFlush) end() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ended = true
}

// firstByte is a request body that remembers its first byte that is not
// white space ('[' for a batch).
type firstByte struct {
	io.ReadCloser
	first byte
}

func (b *firstByte) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.first == 0 {
		for _, c := range p[:n] {
			if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
				b.first = c
				break
			}
		}
	}
	return n, err
}

// kindOf tells what the server-sent event p is: go-sdk's priming event, a
// message event carrying a JSON-RPC response (go-sdk writes "jsonrpc"
// first, then the id, then "result" or "error"; a request or notification
// has "method" there), or another. An event misjudged is only flushed
// sooner, or later by at most primeHold or until the end of its response.
func kindOf(p []byte) eventKind {
	if bytes.HasPrefix(p, []byte("event: prime\n")) {
		return eventPrime
	}
	if !bytes.HasPrefix(p, []byte("event: message\n")) {
		return eventOther
	}
	i := bytes.Index(p, []byte("\ndata: "))
	if i < 0 {
		return eventOther
	}
	d, ok := bytes.CutPrefix(p[i+len("\ndata: "):], []byte(`{"jsonrpc":"2.0","id":`))
	if !ok {
		return eventOther
	}
	n := skipID(d)
	if n < 0 {
		return eventOther
	}
	if d = d[n:]; bytes.HasPrefix(d, []byte(`,"result":`)) || bytes.HasPrefix(d, []byte(`,"error":`)) {
		return eventResponse
	}
	return eventOther
}

// skipID is the length of the JSON number or string d starts with, or -1.
func skipID(d []byte) int {
	if len(d) == 0 {
		return -1
	}
	if d[0] != '"' {
		i := 0
		for i < len(d) && (d[i] == '-' || d[i] == '+' || d[i] == '.' || d[i] == 'e' || d[i] == 'E' || d[i] >= '0' && d[i] <= '9') {
			i++
		}
		if i == 0 {
			return -1
		}
		return i
	}
	for i := 1; i < len(d); i++ {
		switch d[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// flusher flushes the priming events held back for primeHold: one
// goroutine, started when the first is held, that looks every primeHold
// while some are held and ends with the server's context.
type flusher struct {
	mu      sync.Mutex
	ctx     context.Context
	wg      *sync.WaitGroup
	held    []*heldFlush
	running bool
	wake    chan struct{}
}

// hold has w's priming event flushed once it was held for primeHold.
func (f *flusher) hold(w *heldFlush) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.held = append(f.held, w)
	if f.running {
		select {
		case f.wake <- struct{}{}:
		default:
		}
		return
	}
	if f.ctx == nil || f.ctx.Err() != nil {
		return // a server not yet serving, or closed: the handler's end flushes it
	}
	f.running = true
	if f.wake == nil {
		f.wake = make(chan struct{}, 1)
	}
	f.wg.Go(f.loop)
}

// loop flushes what was held for primeHold, every primeHold, until
// nothing is held (then it waits for the next) or the context ends.
func (f *flusher) loop() {
	t := time.NewTimer(primeHold)
	defer t.Stop()
	for {
		select {
		case <-f.ctx.Done():
			f.mu.Lock()
			f.running, f.held = false, nil
			f.mu.Unlock()
			return
		case <-t.C:
		}
		cutoff := time.Now().Add(-primeHold)
		f.mu.Lock()
		held := f.held
		f.held = nil
		f.mu.Unlock()
		var keep []*heldFlush
		for _, w := range held {
			if !w.flushHeld(cutoff) {
				keep = append(keep, w)
			}
		}
		f.mu.Lock()
		f.held = append(f.held, keep...)
		idle := len(f.held) == 0
		f.mu.Unlock()
		if idle {
			select {
			case <-f.ctx.Done():
				f.mu.Lock()
				f.running, f.held = false, nil
				f.mu.Unlock()
				return
			case <-f.wake:
			}
		}
		t.Reset(primeHold)
	}
}
