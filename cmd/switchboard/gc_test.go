package main

import (
	"runtime"
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

// TestTuneProcs: a gateway serving stdio runs on one processor unless the
// environment sets GOMAXPROCS (serve calls it only for stdio: HTTP keeps
// every processor).
func TestTuneProcs(t *testing.T) {
	tests := []struct {
		name, gomaxprocs string
		want             int
	}{
		{"unset", "", 1},
		{"set", "4", 3},
	}
	orig := runtime.GOMAXPROCS(3)
	defer runtime.GOMAXPROCS(orig)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runtime.GOMAXPROCS(3)
			tuneProcs(func(k string) string {
				if k == "GOMAXPROCS" {
					return tt.gomaxprocs
				}
				return ""
			})
			if got := runtime.GOMAXPROCS(0); got != tt.want {
				t.Fatalf("GOMAXPROCS %d, want %d", got, tt.want)
			}
		})
	}
}
