package gateway

import (
	"io"
	"net/http"
	"sync/atomic"

	"github.com/nats-io/nats.go"
)

// Paths of the probes a load balancer or an orchestrator polls. They are
// served outside the MCP endpoint: no token, no origin check.
const (
	livePath  = "/healthz"
	readyPath = "/readyz"
)

// health answers the probes: /healthz while the process serves HTTP,
// /readyz while it should be sent new requests: not draining and, with
// replicas sharing NATS, connected to it (which routes their sessions and
// retries).
type health struct {
	draining atomic.Bool
	nc       *nats.Conn // nil without Conn
}

func (h *health) live(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, "ok\n")
}

func (h *health) ready(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	switch {
	case h.draining.Load():
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, "shutting down\n")
	case h.nc != nil && !h.nc.IsConnected():
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, "not connected to NATS\n")
	default:
		_, _ = io.WriteString(w, "ready\n")
	}
}

// mount adds the probes to mux, except a path the MCP endpoint took.
func (h *health) mount(mux *http.ServeMux, mcpPath string) {
	if mcpPath != livePath {
		mux.HandleFunc("GET "+livePath, h.live)
	}
	if mcpPath != readyPath {
		mux.HandleFunc("GET "+readyPath, h.ready)
	}
}
