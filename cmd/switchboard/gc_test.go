package main

import (
	"runtime/debug"
	"testing"
)

// TestTuneGC: the gateway collects at GOGC=400 unless the environment
// sets GOGC, whose value then stands (issue 22: collection was 40% of the
// gateway's CPU at the default 100).
func TestTuneGC(t *testing.T) {
	tests := []struct {
		name, gogc string
		want       int
	}{
		{"unset", "", gcPercent},
		{"set", "100", 100},
		{"off", "off", 100}, // GOGC=off is the runtime's to apply; tuneGC leaves the setting alone
	}
	orig := debug.SetGCPercent(100)
	defer debug.SetGCPercent(orig)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			debug.SetGCPercent(100)
			tuneGC(func(k string) string {
				if k == "GOGC" {
					return tt.gogc
				}
				return ""
			})
			if got := debug.SetGCPercent(100); got != tt.want {
				t.Fatalf("GC percent %d, want %d", got, tt.want)
			}
		})
	}
}
