package httpkind

import (
	"testing"

	"github.com/switchboard-dev/switchboard/agent/failure"
)

func TestHTTPStatus(t *testing.T) {
	for code, want := range map[int]failure.Kind{429: failure.Transient, 503: failure.Transient, 500: failure.Transient,
		401: failure.PermissionDenied, 403: failure.PermissionDenied, 400: failure.Protocol, 408: failure.Timeout, 200: failure.Unknown} {
		if got := FromStatus(code); got != want {
			t.Errorf("%d: %s, want %s", code, got, want)
		}
	}
}
