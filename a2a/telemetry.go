package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/telemetry"
)

// telemetrySource is the served agent's telemetry configuration (an
// *agent.Agent's Config.Telemetry, or a workflow's), as the rest of the
// library takes its providers; a runner without one uses the global
// providers, looked up at each request.
func telemetrySource(r agent.Runner) *telemetry.Source {
	if ht, ok := r.(interface{ Telemetry() agent.Telemetry }); ok {
		c := ht.Telemetry()
		return telemetry.NewSource(c.TracerProvider, c.MeterProvider, c.RecordContent)
	}
	return telemetry.NewSource(nil, nil, false)
}

// serveTraced serves r continuing the trace context of its headers and,
// when telemetry is on, counts it in the switchboard.a2a.server.requests
// metric by endpoint and by the failure kind of its outcome (error.type,
// absent on success).
func (s *Server) serveTraced(w http.ResponseWriter, r *http.Request) {
	if telemetry.HasHTTP(r.Header) {
		r = r.WithContext(telemetry.ExtractHTTP(r.Context(), r.Header))
	}
	t := s.tel.Get()
	if t == nil {
		s.mux.ServeHTTP(w, r)
		return
	}
	endpoint := endpointOf(r.URL.Path)
	o := &outcome{}
	ow := &outcomeWriter{ResponseWriter: w, status: http.StatusOK, sniff: endpoint == "jsonrpc"}
	// The request is a SERVER span (the peer of the caller's CLIENT
	// execute_tool span); the run it starts is its child.
	ctx, op := r.Context(), (*telemetry.Op)(nil)
	if endpoint != "card" { // discovery, not a call: no span of its own
		ctx, op = t.StartA2AServer(ctx, endpoint)
	}
	r = r.WithContext(context.WithValue(ctx, outcomeKey{}, o))
	s.mux.ServeHTTP(ow, r)
	kind := o.kind(ow)
	op.End(r.Context(), kind)
	t.A2ARequest(r.Context(), endpoint, kind)
}

// endpointOf names the endpoint a request is for.
func endpointOf(path string) string {
	switch {
	case strings.HasPrefix(path, restPath+"/"):
		return "rest"
	case path == cardPath || path == legacyCardPath:
		return "card"
	}
	return "jsonrpc"
}

type outcomeKey struct{}

// outcome is the first error a request's handler reported.
type outcome struct {
	mu  sync.Mutex
	err error
}

func (o *outcome) set(err error) {
	o.mu.Lock()
	if o.err == nil {
		o.err = err
	}
	o.mu.Unlock()
}

// kind is the failure kind of the request's outcome: the handler's error,
// else the error of a JSON-RPC answer or an HTTP error status ("" for
// success).
func (o *outcome) kind(w *outcomeWriter) string {
	o.mu.Lock()
	err := o.err
	o.mu.Unlock()
	if err == nil && w.rpcCode != 0 {
		if err = legacyCodes[w.rpcCode]; err == nil {
			err = errors.New("JSON-RPC error")
		}
	}
	if err != nil {
		return classify(err, "", "", "serve").Kind.String()
	}
	if w.status >= 400 {
		return failure.KindOfStatus(w.status).String()
	}
	return ""
}

// outcomeInterceptor records the error of each call a2a-go's handler
// answers in the request's outcome (a stream's too).
type outcomeInterceptor struct {
	a2asrv.PassthroughCallInterceptor
}

func (outcomeInterceptor) After(ctx context.Context, _ *a2asrv.CallContext, resp *a2asrv.Response) error {
	if resp.Err != nil {
		if o, ok := ctx.Value(outcomeKey{}).(*outcome); ok {
			o.set(resp.Err)
		}
	}
	return nil
}

// maxSniff bounds the start of a JSON-RPC answer read for its error code.
const maxSniff = 4096

// outcomeWriter records a response's status and, for JSON-RPC, the error
// code of an answer that is an error object (errors answered before a2a-go's
// handler runs: parse errors, unknown methods, versions, limits).
type outcomeWriter struct {
	http.ResponseWriter
	status  int
	wrote   bool
	sniff   bool
	rpcCode int
}

func (w *outcomeWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *outcomeWriter) Write(p []byte) (int, error) {
	first := !w.wrote
	w.wrote = true
	if first && w.sniff && len(p) <= maxSniff && bytes.Contains(p, []byte(`"error"`)) &&
		!strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		var m struct {
			Error *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if json.Unmarshal(p, &m) == nil && m.Error != nil {
			w.rpcCode = m.Error.Code
		}
	}
	return w.ResponseWriter.Write(p)
}

// Flush streams SSE through the wrapper.
func (w *outcomeWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *outcomeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// execute runs fn under the toolset's failure policy for the peer; each
// retry the policy makes leaves a switchboard.retry event (the attempt and
// the failure kind that caused it) on the caller's span, the run's
// execute_tool span.
func (r *remote) execute(ctx context.Context, fn func(context.Context) error) error {
	attempt, last := 0, ""
	return r.ts.pol().Execute(ctx, r.key, func(ctx context.Context) error {
		attempt++
		if attempt > 1 {
			telemetry.Retry(ctx, attempt, last)
		}
		err := fn(ctx)
		if err != nil {
			last = failure.From(err).Kind.String()
		}
		return err
	})
}
