package main

import (
	"runtime"
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

// tuneProcs, called by a gateway serving stdio, runs it on one processor unless
// getenv("GOMAXPROCS") is set. Its one client's calls are forwarded
// between pipes (mcp/server's fast path), work that waits on the client
// and the servers far more than it computes: with a second processor the
// runtime woke and parked a spinning thread around every message, which
// cost a third of the gateway's CPU per call and added to each call's
// time (docs/performance.md, "Gateway"). HTTP, with many clients, keeps
// every processor.
func tuneProcs(getenv func(string) string) {
	if getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}
