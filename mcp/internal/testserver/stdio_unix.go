//go:build unix

package main

import (
	"io"
	"os"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pollableStdio is the stdio transport over stdin and stdout made
// non-blocking, so that they are read and written through the runtime's
// netpoller rather than in blocking system calls.
//
// Go 1.26 (seen with go1.26.8): a goroutine entering a blocking read(2)
// just as a GC stops the world can hold the stop-the-world until sysmon
// wakes, which is up to 60 s in a process without timers. A stdio server
// whose client waits for its answer gets no more input to end the read,
// so one tool call in a few hundred thousand took exactly 60 s (gctrace:
// "60000+1.3+0.008 ms clock" in sweep termination). go-sdk's
// StdioTransport reads os.Stdin, which is blocking.
func pollableStdio() mcp.Transport {
	if syscall.SetNonblock(0, true) != nil || syscall.SetNonblock(1, true) != nil {
		return &mcp.StdioTransport{}
	}
	out = &lockedWriter{w: os.NewFile(1, "stdout")}
	return &mcp.IOTransport{Reader: io.NopCloser(deafReader{r: os.NewFile(0, "stdin")}), Writer: nopWriteCloser{out}}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
