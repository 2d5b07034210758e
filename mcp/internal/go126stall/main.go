//go:build unix

// Command go126stall reproduces a Go 1.26 runtime race without MCP: a
// goroutine entering a blocking read(2) just as another goroutine's GC
// stops the world can hold the stop-the-world until the runtime's sysmon
// thread wakes from its deep sleep, up to 60 s in a process without
// timers. One goroutine reads a pipe (blocking descriptors, as a child's
// stdin), another calls runtime.GC per round trip; with GOMAXPROCS=2 it
// showed two 60 s round trips in 30,000 on go1.26.8 (a 20 ms ticker, or
// all pipe ends made non-blocking with -nb, made it go away).
//
// It is why the mcp package pings a stdio server whose answer is overdue,
// why mcp/server reads a StdioTransport's stdin through the netpoller, and
// why the mcp test server does too (see docs/performance.md). Run it on a new Go release to see whether those
// workarounds are still needed:
//
//	GOMAXPROCS=2 go run ./mcp/internal/go126stall -d 10m
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"syscall"
	"time"
)

var sink []byte

func main() {
	dur := flag.Duration("d", 5*time.Minute, "run time")
	gc := flag.Bool("gc", true, "call runtime.GC in the handler (else allocate)")
	nb := flag.Bool("nb", false, "read the request pipe through the netpoller (O_NONBLOCK + os.NewFile)")
	tick := flag.Duration("tick", 0, "keep a ticker of this period running (workaround)")
	flag.Parse()
	if *tick > 0 {
		go func() {
			for range time.NewTicker(*tick).C {
			}
		}()
	}
	var req, resp [2]int
	if err := syscall.Pipe(req[:]); err != nil { // blocking fds, like a child's stdin
		panic(err)
	}
	if err := syscall.Pipe(resp[:]); err != nil {
		panic(err)
	}
	ch := make(chan byte)
	read := func(b []byte) (int, error) { return syscall.Read(req[0], b) }
	writeResp := func(b []byte) (int, error) { return syscall.Write(resp[1], b) }
	writeReq := func(b []byte) (int, error) { return syscall.Write(req[1], b) }
	readResp := func(b []byte) (int, error) { return syscall.Read(resp[0], b) }
	if *nb {
		// Every end through the netpoller: no goroutine ever sits in a
		// blocking read(2).
		var fs [4]*os.File
		for i, fd := range []int{req[0], req[1], resp[0], resp[1]} {
			if err := syscall.SetNonblock(fd, true); err != nil {
				panic(err)
			}
			fs[i] = os.NewFile(uintptr(fd), "pipe")
		}
		read, writeReq, readResp, writeResp = fs[0].Read, fs[1].Write, fs[2].Read, fs[3].Write
	}
	go func() { // "server" reader: like go-sdk's ioConn goroutine reading os.Stdin
		b := make([]byte, 1)
		for {
			if n, err := read(b); n != 1 || err != nil {
				panic(err)
			}
			ch <- b[0]
		}
	}()
	go func() { // "server" handler
		for b := range ch {
			if *gc {
				runtime.GC()
			} else {
				for i := 0; i < 8; i++ {
					sink = make([]byte, 64<<10)
				}
			}
			if _, err := writeResp([]byte{b}); err != nil {
				panic(err)
			}
		}
	}()
	b := make([]byte, 1)
	start := time.Now()
	var n, slow int
	var max time.Duration
	for time.Since(start) < *dur {
		t0 := time.Now()
		if _, err := writeReq([]byte{'x'}); err != nil {
			panic(err)
		}
		if _, err := readResp(b); err != nil {
			panic(err)
		}
		d := time.Since(t0)
		n++
		if d > max {
			max = d
		}
		if d > 500*time.Millisecond {
			slow++
			fmt.Fprintf(os.Stderr, "%s round trip %d took %v\n", t0.Format("15:04:05.000"), n, d)
		}
	}
	sample := []metrics.Sample{{Name: "/sched/pauses/stopping/gc:seconds"}}
	metrics.Read(sample)
	h := sample[0].Value.Float64Histogram()
	var stops, over10ms uint64
	var maxStop float64
	for i, c := range h.Counts {
		stops += c
		if c > 0 {
			maxStop = h.Buckets[i+1]
			if h.Buckets[i] >= 0.010 {
				over10ms += c
			}
		}
	}
	fmt.Printf("GC stop-the-world stopping latency: %d stops, %d >= 10ms, max bucket <= %.3gs\n", stops, over10ms, maxStop)
	fmt.Printf("%s: %d round trips in %v, max %v, >500ms %d (GOMAXPROCS=%d)\n", runtime.Version(), n, time.Since(start).Round(time.Second), max, slow, runtime.GOMAXPROCS(0))
}
