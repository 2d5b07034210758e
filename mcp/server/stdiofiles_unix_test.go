//go:build unix

package server

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/mcp/internal/lineconn"
)

// TestStdioWriteBounded: a blocking descriptor, as a process's stdout
// is, served as stdioFiles serves it (pollable, keptFile) has working
// deadlines, so a write to a client that stopped reading ends at its
// context's deadline instead of blocking for good.
func TestStdioWriteBounded(t *testing.T) {
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil { // blocking, like a child's stdout
		t.Fatal(err)
	}
	r := os.NewFile(uintptr(fds[0]), "r")
	defer r.Close()
	w := pollable(fds[1], "w", nil)
	if w == nil {
		t.Fatal("the descriptor could not be made non-blocking")
	}
	defer w.Close()
	c := lineconn.New(strings.NewReader(""), keptFile{w}, lineconn.Options{Stall: time.Minute})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.WriteLine(ctx, []byte(`"`+strings.Repeat("x", 4<<20)+`"`)) }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a 4 MiB write to a pipe nobody reads succeeded")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the write ignored its deadline")
	}
}

// TestStdioOnlyPipesMadePollable: a regular file (or a terminal) given as
// stdin or stdout stays as it is, so its blocking mode, which a shell
// shares, is not changed; a pipe is made pollable.
func TestStdioOnlyPipesMadePollable(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "stdout")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := pollable(int(f.Fd()), "file", f); got != f {
		t.Error("a regular file was made non-blocking")
	}
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fds[0])
	p := pollable(fds[1], "pipe", nil)
	if p == nil {
		t.Fatal("a pipe was not made pollable")
	}
	p.Close()
}
