package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// TestServeRefusesBadTelemetryConfig: an OTEL_* setting OpenTelemetry
// cannot honour stops the gateway before it serves, with an error naming
// the variable; the gateway with no OTEL_* set needs none of it.
func TestServeRefusesBadTelemetryConfig(t *testing.T) {
	for _, tc := range []struct{ name, value, want string }{
		{"OTEL_TRACES_EXPORTER", "bogus", "OTEL_TRACES_EXPORTER"},
		{"OTEL_METRICS_EXPORTER", "bogus", "OTEL_METRICS_EXPORTER"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(tc.name, tc.value)
			opts, err := parseServe([]string{"-skills", t.TempDir()}, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err = serve(ctx, opts, strings.NewReader(""), io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("serve: %v; want a refusal naming %s", err, tc.want)
			}
		})
	}
}
