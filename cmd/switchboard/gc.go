package main

import (
	"runtime/debug"
)

// gcPercent is the gateway's garbage-collection target (GOGC) unless the
// environment sets GOGC. A forwarded call allocates about 200 KiB that
// dies at once, most of it go-sdk's 32 KiB decoder buffers (seven per
// call: four on the served side, three on the Manager's client side),
// against a live heap of a few MiB: at Go's default of 100 the gateway
// collected every 8 or 9 calls, and collection was about 40% of its CPU
// (docs/performance.md, "Gateway"). At 400 it collects about every 60
// calls; the heap may grow to five times what is live.
const gcPercent = 400

// tuneGC sets gcPercent unless getenv("GOGC") is set (the user's setting
// wins, "off" included).
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}
