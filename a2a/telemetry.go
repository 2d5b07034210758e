package a2a

import (
	"net/http"
	"strings"

	"github.com/switchboard-dev/switchboard/internal/telemetry"
)

// traced continues the trace context of a request's headers in its
// context, and counts the request in the switchboard.a2a.server.requests
// metric (by binding) when metrics are on.
func traced(r *http.Request) *http.Request {
	if t := telemetry.Global(); t != nil {
		t.A2ARequest(r.Context(), endpointOf(r.URL.Path), "")
	}
	if !telemetry.HasHTTP(r.Header) {
		return r
	}
	return r.WithContext(telemetry.ExtractHTTP(r.Context(), r.Header))
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
