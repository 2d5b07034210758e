package failure_test

import (
	"testing"

	"github.com/switchboard-dev/switchboard/failure"
)

func TestKindOfStatus(t *testing.T) {
	for code, want := range map[int]failure.Kind{429: failure.Transient, 503: failure.Transient, 500: failure.Transient,
		401: failure.PermissionDenied, 403: failure.PermissionDenied, 400: failure.Protocol, 408: failure.Timeout, 200: failure.Unknown} {
		if got := failure.KindOfStatus(code); got != want {
			t.Errorf("%d: %s, want %s", code, got, want)
		}
	}
}
