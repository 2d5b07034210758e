package sessionroute

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

// onStart receives a request forwarded to this replica. It runs on the
// subscription's goroutine, so it only checks, answers and hands over.
func (r *Router) onStart(m *nats.Msg) {
	if m.Reply == "" {
		return
	}
	s, part, err := decodeStart(m.Data, r.cfg.MaxBody)
	if err != nil {
		r.log.Warn().Err(err).Msg("a malformed forwarded request")
		_ = m.Respond(encodeRefusal(http.StatusBadRequest, "malformed forwarded request"))
		return
	}
	select {
	case r.sem <- struct{}{}:
	default:
		_ = m.Respond(encodeRefusal(http.StatusServiceUnavailable, "the replica holding the session is busy"))
		return
	}
	o := &owned{r: r, s: s, body: bytes.NewBuffer(make([]byte, 0, len(part))), bodyDone: make(chan struct{})}
	o.ctx, o.cancel = context.WithCancel(r.ctx)
	o.body.Write(part)
	if int64(o.body.Len()) == s.BodyLen {
		close(o.bodyDone)
	}
	ctl := r.cfg.Conn.NewInbox()
	o.sub, err = r.cfg.Conn.Subscribe(ctl, o.onControl)
	if err != nil {
		<-r.sem
		o.cancel()
		_ = m.Respond(encodeRefusal(http.StatusServiceUnavailable, "the replica holding the session cannot serve it"))
		return
	}
	_ = o.sub.SetPendingLimits(16, 2*(chunkSize+4096))
	// Three heartbeats without a ping: the receiver is gone.
	o.watchdog = time.AfterFunc(3*r.cfg.Heartbeat, func() { o.stopped.Store(true); o.cancel() })
	r.gmu.Lock()
	if r.closing {
		r.gmu.Unlock()
		o.release()
		_ = m.Respond(encodeRefusal(http.StatusServiceUnavailable, "the replica holding the session is shutting down"))
		return
	}
	r.wg.Add(1)
	r.gmu.Unlock()
	if err := m.Respond(append([]byte{'K'}, ctl...)); err != nil {
		r.wg.Done()
		o.release()
		return
	}
	go func() {
		defer r.wg.Done()
		defer o.release()
		defer func() {
			if v := recover(); v != nil { // as net/http does for its handlers
				r.log.Error().Interface("panic", v).Msg("serving a forwarded request panicked")
			}
		}()
		o.serve()
	}()
}

// owned is one forwarded request being served by its session's owner.
type owned struct {
	r        *Router
	s        *start
	ctx      context.Context
	cancel   context.CancelFunc
	sub      *nats.Subscription
	watchdog *time.Timer
	stopped  atomic.Bool // the receiver stopped the response, or went silent

	mu       sync.Mutex // guards body and nextBody
	body     *bytes.Buffer
	nextBody uint64
	bodyDone chan struct{}
}

func (o *owned) release() {
	o.watchdog.Stop()
	_ = o.sub.Unsubscribe()
	o.cancel()
	<-o.r.sem
}

// onControl handles the receiver's body chunks, pings and cancel.
func (o *owned) onControl(m *nats.Msg) {
	if len(m.Data) == 0 {
		return
	}
	switch m.Data[0] {
	case 'P':
		if o.ctx.Err() == nil {
			o.watchdog.Reset(3 * o.r.cfg.Heartbeat)
		}
		_ = m.Respond([]byte{'A'})
	case 'C':
		o.stopped.Store(true)
		o.cancel()
	case 'B':
		seq, data, err := decodeChunk(m.Data)
		o.mu.Lock()
		ok := err == nil && seq == o.nextBody+1 && int64(o.body.Len()+len(data)) <= o.s.BodyLen && !closed(o.bodyDone)
		if ok {
			o.nextBody = seq
			o.body.Write(data)
			o.watchdog.Reset(3 * o.r.cfg.Heartbeat) // the receiver is there
			if int64(o.body.Len()) == o.s.BodyLen {
				close(o.bodyDone)
			}
		}
		o.mu.Unlock()
		if !ok {
			o.stopped.Store(true)
			o.cancel()
			_ = m.Respond([]byte{'C'})
			return
		}
		_ = m.Respond([]byte{'A'})
	}
}

func closed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// serve waits for the whole body, then serves the request with Local and
// streams the response to the receiver.
func (o *owned) serve() {
	t := time.NewTimer(startTimeout * 2)
	select {
	case <-o.bodyDone:
		t.Stop()
	case <-o.ctx.Done():
		t.Stop()
		return
	case <-t.C:
		o.r.log.Warn().Msg("a forwarded request's body did not arrive")
		return
	}
	o.r.served.Add(1)
	o.r.log.Debug().Str("method", o.s.Method).Msg("serving a request forwarded to this session's owner")
	ctx := o.ctx
	if o.s.Local != "" {
		ctx = context.WithValue(ctx, http.LocalAddrContextKey, addr(o.s.Local))
	}
	o.mu.Lock()
	body := o.body.Bytes()
	o.mu.Unlock()
	req, err := http.NewRequestWithContext(ctx, o.s.Method, o.s.URI, bytes.NewReader(body))
	if err != nil {
		return // checked by decodeStart
	}
	req.RequestURI, req.Host, req.RemoteAddr, req.Header = o.s.URI, o.s.Host, o.s.Remote, o.s.Header
	if req.Header == nil {
		req.Header = http.Header{}
	}
	fw := &frameWriter{o: o, header: http.Header{}}
	o.r.serveOwned(fw, req)
	fw.finish()
}

// addr is the receiver's local address, for go-sdk's DNS-rebinding check.
type addr string

func (a addr) Network() string { return "tcp" }
func (a addr) String() string  { return string(a) }

// errStopped is a write after the receiver stopped the response.
var errStopped = errors.New("sessionroute: the forwarded response was stopped")

// frameWriter is the ResponseWriter of a forwarded request: it sends what
// the handler writes as frames, one at a time, each acknowledged.
type frameWriter struct {
	o      *owned
	mu     sync.Mutex
	header http.Header
	status int
	sent   bool // the head went out
	seq    uint64
	buf    []byte
	err    error
	ended  bool
}

func (fw *frameWriter) Header() http.Header { return fw.header }

func (fw *frameWriter) WriteHeader(code int) {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if fw.status == 0 && code >= 200 {
		fw.status = code
	}
}

func (fw *frameWriter) Write(p []byte) (int, error) {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if fw.status == 0 {
		fw.status = http.StatusOK
	}
	if fw.err != nil {
		return 0, fw.err
	}
	n := len(p)
	for len(p) > 0 {
		k := min(len(p), chunkSize-len(fw.buf))
		fw.buf = append(fw.buf, p[:k]...)
		p = p[k:]
		if len(fw.buf) == chunkSize {
			if err := fw.sendLocked(fw.o.ctx, 0); err != nil {
				return n - len(p), err
			}
		}
	}
	return n, nil
}

// FlushError sends what is buffered (and the head) now.
func (fw *frameWriter) FlushError() error {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if fw.status == 0 {
		fw.status = http.StatusOK
	}
	if fw.err != nil {
		return fw.err
	}
	if fw.sent && len(fw.buf) == 0 {
		return nil
	}
	return fw.sendLocked(fw.o.ctx, 0)
}

// finish sends the rest and the end, unless the receiver stopped the
// response or cannot be reached. A request cancelled here (the replica is
// closing) before its handler wrote anything ends with 503.
func (fw *frameWriter) finish() {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if fw.err != nil || fw.o.stopped.Load() {
		return
	}
	ctx := fw.o.ctx
	if ctx.Err() != nil {
		if fw.status == 0 {
			fw.status = http.StatusServiceUnavailable
			fw.header = http.Header{"Content-Type": {"text/plain; charset=utf-8"}, "Retry-After": {"1"}}
			fw.buf = append(fw.buf[:0], "the replica holding the session is shutting down\n"...)
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.Background(), startTimeout)
		defer cancel()
	}
	if fw.status == 0 {
		fw.status = http.StatusOK
	}
	_ = fw.sendLocked(ctx, flagEnd)
}

// sendLocked sends the buffer as one frame and waits for its ack.
func (fw *frameWriter) sendLocked(ctx context.Context, flags byte) error {
	f := &frame{flags: flags, seq: fw.seq, data: fw.buf}
	if !fw.sent {
		f.flags |= flagHead
		f.head = &head{Status: fw.status, Header: fw.header.Clone()}
	}
	b, err := encodeFrame(f)
	if err == nil && len(b) > int(fw.o.r.cfg.Conn.MaxPayload()) {
		err = protocolErr("a response frame past the NATS payload limit (headers too large)")
	}
	if err != nil {
		fw.err = err
		fw.o.cancel()
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, fw.o.r.cfg.WriteTimeout+startTimeout)
	defer cancel()
	ack, err := fw.o.r.cfg.Conn.RequestWithContext(ctx, fw.o.s.Reply, b)
	if err == nil && (len(ack.Data) != 1 || ack.Data[0] != 'A') {
		err = errStopped
	}
	if err != nil {
		fw.err = errStopped
		fw.o.cancel()
		return fw.err
	}
	fw.sent, fw.seq, fw.buf = true, fw.seq+1, fw.buf[:0]
	return nil
}
