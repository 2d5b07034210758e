package sessionroute

import (
	"context"
	"net/http"
)

// serveNew serves a POST without a session (an initialize) with Local and
// records the session its response creates before the client can see the
// id, so that the client's next request finds it on any replica. When the
// entry cannot be written the client gets 503 and the session is closed:
// no session lives that other replicas could not route.
func (r *Router) serveNew(w http.ResponseWriter, req *http.Request) {
	nw := &newWriter{ResponseWriter: w, r: r, ctx: req.Context()}
	r.cfg.Local.ServeHTTP(nw, req)
	if !nw.wrote { // net/http would write the implicit 200 past the wrapper
		nw.WriteHeader(http.StatusOK)
	}
	if nw.failed != "" {
		del := req.Clone(context.WithoutCancel(req.Context()))
		del.Method, del.Body, del.ContentLength = http.MethodDelete, http.NoBody, 0
		del.Header.Set(sessionHeader, nw.failed)
		r.cfg.Local.ServeHTTP(&discard{h: http.Header{}}, del)
	}
}

// serveDelete serves a DELETE of an owned session with Local and removes
// its entry once the session is gone.
func (r *Router) serveDelete(w http.ResponseWriter, req *http.Request, sid string) {
	sw := &statusWriter{ResponseWriter: w}
	r.cfg.Local.ServeHTTP(sw, req)
	if sw.status/100 == 2 || sw.status == http.StatusNotFound {
		_ = r.forget(context.WithoutCancel(req.Context()), sid)
	}
}

// serveOwned serves a request forwarded to this replica.
func (r *Router) serveOwned(w http.ResponseWriter, req *http.Request) {
	if sid := req.Header.Get(sessionHeader); req.Method == http.MethodDelete && r.owns(sid) {
		r.serveDelete(w, req, sid)
		return
	}
	r.cfg.Local.ServeHTTP(w, req)
}

// newWriter records the session id of the response's headers when they
// are written.
type newWriter struct {
	http.ResponseWriter
	r      *Router
	ctx    context.Context
	wrote  bool
	failed string // the session that could not be recorded
}

func (nw *newWriter) WriteHeader(code int) {
	if code < 200 { // an informational answer; the real one follows
		nw.ResponseWriter.WriteHeader(code)
		return
	}
	if nw.wrote {
		return
	}
	nw.wrote = true
	h := nw.Header()
	if sid := h.Get(sessionHeader); sid != "" && code/100 == 2 && !nw.r.owns(sid) {
		if !keyRE.MatchString(sid) {
			nw.r.log.Warn().Msg("a session id that cannot be a KV key: the session is not routed")
		} else if err := nw.r.record(nw.ctx, sid); err != nil {
			nw.r.log.Warn().Err(err).Msg("a new session could not be recorded: refused")
			nw.failed = sid
			h.Del(sessionHeader)
			h.Set("Retry-After", "1")
			http.Error(nw.ResponseWriter, "session routing unavailable", http.StatusServiceUnavailable)
			return
		}
	}
	nw.ResponseWriter.WriteHeader(code)
}

func (nw *newWriter) Write(p []byte) (int, error) {
	if !nw.wrote {
		nw.WriteHeader(http.StatusOK)
	}
	if nw.failed != "" {
		return len(p), nil
	}
	return nw.ResponseWriter.Write(p)
}

// FlushError is found by http.ResponseController before Unwrap, so that
// a flush writes the headers through WriteHeader.
func (nw *newWriter) FlushError() error {
	if !nw.wrote {
		nw.WriteHeader(http.StatusOK)
	}
	if nw.failed != "" {
		return nil
	}
	return http.NewResponseController(nw.ResponseWriter).Flush()
}

func (nw *newWriter) Unwrap() http.ResponseWriter { return nw.ResponseWriter }

// statusWriter remembers the status written.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (sw *statusWriter) WriteHeader(code int) {
	if sw.status == 0 {
		sw.status = code
	}
	sw.ResponseWriter.WriteHeader(code)
}

func (sw *statusWriter) Write(p []byte) (int, error) {
	if sw.status == 0 {
		sw.status = http.StatusOK
	}
	return sw.ResponseWriter.Write(p)
}

func (sw *statusWriter) FlushError() error {
	if sw.status == 0 {
		sw.status = http.StatusOK
	}
	return http.NewResponseController(sw.ResponseWriter).Flush()
}

func (sw *statusWriter) Unwrap() http.ResponseWriter { return sw.ResponseWriter }

// discard is a ResponseWriter that keeps nothing.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(int)             {}
