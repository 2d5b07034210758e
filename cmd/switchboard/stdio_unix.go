//go:build unix

package main

import (
	"io"
	"os"
	"syscall"
)

// stdio returns the process's stdin and stdout made non-blocking, so that
// they are read and written through the runtime's netpoller rather than in
// blocking system calls, and kept open when the session ends (other
// readers and writers are wrapped alike). Go 1.26 (go1.26.8): a goroutine
// entering a blocking read(2) just as a GC stops the world can hold the
// stop-the-world until sysmon wakes, up to 60 s, and a stdio server whose
// client waits gets no input to end the read (docs/performance.md,
// internal/go126stall). As files in the netpoller they also get bounded
// writes and raw system calls from the served connection
// (internal/lineconn).
func stdio(in io.Reader, out io.Writer) (io.ReadCloser, io.WriteCloser) {
	if in != io.Reader(os.Stdin) || out != io.Writer(os.Stdout) || syscall.SetNonblock(0, true) != nil {
		return keepOpen(in, out)
	}
	if syscall.SetNonblock(1, true) != nil {
		_ = syscall.SetNonblock(0, false) // os.Stdin reads it as blocking
		return keepOpen(in, out)
	}
	return keepOpen(os.NewFile(0, "stdin"), os.NewFile(1, "stdout"))
}
