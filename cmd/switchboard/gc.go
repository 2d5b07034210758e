package main

import "runtime/debug"

// gcPercent is the gateway's garbage-collection target (GOGC) unless the
// environment sets GOGC. A call through the gateway allocates tens of KiB
// that die at once, most of it go-sdk's 32 KiB decoder buffers, against a
// live heap of a few MiB: at Go's default of 100 the gateway collected
// every few calls, and collection was about 40% of its CPU. At 400 it
// collects about a fifth as often; the heap may grow to five times what
// is live.
const gcPercent = 400

// tuneGC sets gcPercent unless getenv("GOGC") is set (the user's setting
// wins, "off" included).
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}
