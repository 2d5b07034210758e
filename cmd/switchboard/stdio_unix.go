//go:build unix

package main

import (
	"io"
	"os"
	"syscall"
)

// pollable returns the process's stdin and stdout made non-blocking, so
// that they are read and written through the runtime's netpoller rather
// than in blocking system calls (other readers and writers are returned as
// they are). Go 1.26 (go1.26.8): a goroutine entering a blocking read(2)
// just as a GC stops the world can hold the stop-the-world until sysmon
// wakes, up to 60 s, and a stdio server whose client waits gets no input
// to end the read (docs/performance.md, internal/go126stall).
func pollable(in io.Reader, out io.Writer) (io.Reader, io.Writer) {
	if in != io.Reader(os.Stdin) || out != io.Writer(os.Stdout) {
		return in, out
	}
	if syscall.SetNonblock(0, true) != nil || syscall.SetNonblock(1, true) != nil {
		return in, out
	}
	return os.NewFile(0, "stdin"), os.NewFile(1, "stdout")
}
