package sessionroute

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// hopHeaders are not forwarded either way (RFC 9110 §7.6.1).
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// forward serves req by its session's owner: it sends the request over
// NATS and copies the owner's response frames to w as they come.
func (r *Router) forward(w http.ResponseWriter, req *http.Request, sid, owner string) {
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, r.cfg.MaxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "reading the request body failed", http.StatusBadRequest)
		return
	}
	nc := r.cfg.Conn
	inbox := nc.NewInbox()
	frames := make(chan *nats.Msg, 8)
	sub, err := nc.ChanSubscribe(inbox, frames)
	if err != nil {
		r.unavailable(w, err)
		return
	}
	defer func() { _ = sub.Unsubscribe() }()
	// The channel's capacity bounds the frames held: the owner sends the
	// next only once this one is acknowledged.
	s := &start{V: wireVersion, Method: req.Method, URI: req.URL.RequestURI(), Host: req.Host,
		Header: req.Header.Clone(), Remote: req.RemoteAddr, Reply: inbox, BodyLen: int64(len(body))}
	for _, h := range hopHeaders {
		s.Header.Del(h)
	}
	if a, ok := req.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && a != nil {
		s.Local = a.String()
	}
	// The start carries what of the body fits beside the envelope.
	envelope, err := encodeStart(s, nil)
	if err != nil {
		r.unavailable(w, err)
		return
	}
	room := int(nc.MaxPayload()) - len(envelope) - 64
	if room < 0 {
		http.Error(w, "request headers too large to forward", http.StatusRequestHeaderFieldsTooLarge)
		return
	}
	first := body[:min(len(body), chunkSize, room)]
	msg := append(envelope, first...)
	ctx, cancel := context.WithCancel(req.Context())
	defer cancel()
	stop := context.AfterFunc(r.ctx, cancel) // the router closing ends the forward
	defer stop()
	sctx, scancel := context.WithTimeout(ctx, startTimeout)
	reply, err := nc.RequestWithContext(sctx, r.subject(owner), msg)
	scancel()
	if err != nil {
		r.ownerLost(w, err, sid, owner)
		return
	}
	ctl, status, text, err := decodeStartReply(reply.Data)
	switch {
	case err != nil:
		r.log.Warn().Err(err).Str("owner", owner).Msg("the owner answered a forwarded request malformed")
		http.Error(w, "bad gateway", http.StatusBadGateway)
		return
	case status != 0:
		if status == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", "1")
		}
		http.Error(w, text, status)
		return
	}
	r.forwarded.Add(1)
	r.log.Debug().Str("owner", owner).Str("method", req.Method).Msg("forwarding a request to its session's owner")
	for seq, rest := uint64(1), body[len(first):]; len(rest) > 0; seq++ {
		part := rest[:min(len(rest), chunkSize)]
		rest = rest[len(part):]
		bctx, bcancel := context.WithTimeout(ctx, startTimeout)
		ack, err := nc.RequestWithContext(bctx, ctl, encodeChunk(seq, part))
		bcancel()
		if err == nil && (len(ack.Data) != 1 || ack.Data[0] != 'A') {
			r.log.Warn().Str("owner", owner).Msg("the owner refused a forwarded body chunk")
			http.Error(w, "bad gateway", http.StatusBadGateway)
			return
		}
		if err != nil {
			_ = nc.Publish(ctl, []byte{'C'})
			r.controlLost(w, err, owner)
			return
		}
	}
	r.relay(ctx, w, frames, ctl, sid, owner)
}

// relay copies the owner's frames to w, pinging the owner while it is
// quiet, until the last frame, the client leaving, or the owner lost.
func (r *Router) relay(ctx context.Context, w http.ResponseWriter, frames <-chan *nats.Msg, ctl, sid, owner string) {
	nc := r.cfg.Conn
	lost := make(chan error, 1)
	var wg sync.WaitGroup
	pctx, pcancel := context.WithCancel(ctx)
	wg.Add(1)
	go func() {
		defer wg.Done()
		r.ping(pctx, ctl, lost)
	}()
	defer func() { pcancel(); wg.Wait() }()
	rc := http.NewResponseController(w)
	wroteHead := false
	next := uint64(0)
	for {
		select {
		case <-ctx.Done():
			_ = nc.Publish(ctl, []byte{'C'}) // the client went away (or this replica closes): cancel at the owner
			if !wroteHead && r.ctx.Err() != nil {
				r.shuttingDown(w)
			}
			return
		case err := <-lost:
			if !wroteHead {
				r.controlLost(w, err, owner)
			}
			return
		case m := <-frames:
			f, err := decodeFrame(m.Data)
			if err == nil && f.seq != next {
				err = protocolErr("response frame out of sequence")
			}
			if err == nil && !wroteHead && f.flags&flagHead == 0 {
				err = protocolErr("response frame before the head")
			}
			if err != nil {
				r.log.Warn().Err(err).Str("owner", owner).Msg("a forwarded response was malformed")
				_ = m.Respond([]byte{'C'})
				if !wroteHead {
					http.Error(w, "bad gateway", http.StatusBadGateway)
				}
				return
			}
			next++
			if f.head != nil && !wroteHead {
				for k, vs := range f.head.Header {
					w.Header()[k] = vs
				}
				for _, h := range hopHeaders {
					w.Header().Del(h)
				}
				w.WriteHeader(f.head.Status)
				wroteHead = true
				if f.head.Status == http.StatusNotFound {
					r.uncache(sid) // the owner no longer knows it
				}
			}
			_ = rc.SetWriteDeadline(time.Now().Add(r.cfg.WriteTimeout))
			_, err = w.Write(f.data)
			if err == nil {
				err = rc.Flush()
			}
			_ = rc.SetWriteDeadline(time.Time{})
			if err != nil && !errors.Is(err, http.ErrNotSupported) {
				_ = m.Respond([]byte{'C'})
				return
			}
			_ = m.Respond([]byte{'A'})
			if f.flags&flagEnd != 0 {
				return
			}
		}
	}
}

// ping asks the owner every heartbeat whether it still serves the
// request; an owner that does not answer is reported on lost.
func (r *Router) ping(ctx context.Context, ctl string, lost chan<- error) {
	t := time.NewTicker(r.cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, startTimeout)
		_, err := r.cfg.Conn.RequestWithContext(pctx, ctl, []byte{'P'})
		cancel()
		if err != nil && ctx.Err() == nil {
			lost <- err
			return
		}
	}
}

// controlLost answers a request whose owner took it but stopped serving it:
// its body chunk or ping found no one (502: the request's inbox is gone,
// the session may well be alive, so the owner stays cached) or got no
// answer in time (504); 503 when this replica closes. Only a start that
// finds no one means the session is gone (ownerLost).
func (r *Router) controlLost(w http.ResponseWriter, err error, owner string) {
	switch {
	case errors.Is(err, context.Canceled):
		if r.ctx.Err() != nil {
			r.shuttingDown(w)
		}
	case errors.Is(err, nats.ErrNoResponders):
		r.log.Warn().Err(err).Str("owner", owner).Msg("the owner of a session stopped serving a forwarded request")
		http.Error(w, "the replica holding the session stopped serving the request", http.StatusBadGateway)
	default:
		r.log.Warn().Err(err).Str("owner", owner).Msg("the owner of a session did not answer")
		http.Error(w, "the replica holding the session did not answer", http.StatusGatewayTimeout)
	}
}

// ownerLost answers a request whose owner could not be reached: 404 when
// nobody serves its subject (the owner is gone, and its sessions with it:
// the client must initialize again), 504 when it did not answer in time.
func (r *Router) ownerLost(w http.ResponseWriter, err error, sid, owner string) {
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		r.missing.Add(1)
		r.uncache(sid)
		r.log.Info().Str("owner", owner).Msg("the owner of a session is gone: 404, the client initializes again")
		http.Error(w, "session not found", http.StatusNotFound)
	case errors.Is(err, context.Canceled):
		if r.ctx.Err() != nil { // this replica is closing, the client is still there
			r.shuttingDown(w)
		}
	default:
		r.log.Warn().Err(err).Str("owner", owner).Msg("the owner of a session did not answer")
		http.Error(w, "the replica holding the session did not answer", http.StatusGatewayTimeout)
	}
}

func (r *Router) unavailable(w http.ResponseWriter, err error) {
	r.log.Warn().Err(err).Msg("forwarding a request failed")
	w.Header().Set("Retry-After", "1")
	http.Error(w, "session routing unavailable", http.StatusServiceUnavailable)
}

func (r *Router) shuttingDown(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "1")
	http.Error(w, "the replica is shutting down", http.StatusServiceUnavailable)
}
