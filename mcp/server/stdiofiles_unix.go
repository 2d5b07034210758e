//go:build unix

package server

import (
	"os"
	"sync"
	"syscall"
)

// stdioFiles are the process's stdin and stdout as a session on
// go-sdk's StdioTransport reads and writes them: made non-blocking, as
// files in the runtime's netpoller, once per process (they are never
// closed). Two defects are avoided so. A write to a client that stopped
// reading is bounded (a blocking stdout has no deadlines). And Go 1.26
// (go1.26.8): a goroutine entering a blocking read(2) just as a GC stops
// the world can hold the stop-the-world until the runtime's sysmon wakes,
// up to 60 s, and a stdio server whose client waits for an answer gets no
// input to end the read (mcp/internal/go126stall reproduces it). Only a
// pipe or a socket is changed, which is what a client that starts the
// server gives it: a terminal or a file, whose non-blocking mode the shell
// would see after the process exits, and a descriptor that cannot be made
// non-blocking are used as os.Stdin or os.Stdout are.
var stdioFiles = sync.OnceValues(func() (in, out *os.File) {
	return pollable(0, "stdin", os.Stdin), pollable(1, "stdout", os.Stdout)
})

// pollable is descriptor fd made non-blocking, as a file in the
// netpoller, or else fallback.
func pollable(fd int, name string, fallback *os.File) *os.File {
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil {
		return fallback
	}
	if kind := st.Mode & syscall.S_IFMT; kind != syscall.S_IFIFO && kind != syscall.S_IFSOCK {
		return fallback
	}
	if syscall.SetNonblock(fd, true) != nil {
		return fallback
	}
	return os.NewFile(uintptr(fd), name)
}
