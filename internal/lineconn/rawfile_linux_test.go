package lineconn

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRawFileWraps: the pipes of os.Pipe and exec (non-blocking, in the
// netpoller) are read and written raw; a blocking descriptor and streams
// that are not files are left as they are.
func TestRawFileWraps(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	fds := make([]int, 2)
	if err := syscall.Pipe(fds); err != nil { // blocking, as an inherited stdin is
		t.Fatal(err)
	}
	blocking := os.NewFile(uintptr(fds[0]), "blocking")
	defer blocking.Close()
	defer syscall.Close(fds[1])
	type embedded struct{ *os.File } // exec's and cmd/switchboard's wrappers
	for _, tc := range []struct {
		name string
		got  any
		raw  bool
	}{
		{"a pipe's read end", rawReader(r), true},
		{"a pipe's write end", rawWriter(w), true},
		{"a type embedding a pipe's file", rawWriter(embedded{w}), true},
		{"a blocking descriptor", rawReader(blocking), false},
		{"a reader that is no file", rawReader(strings.NewReader("x")), false},
		{"a writer that is no file", rawWriter(&bytes.Buffer{}), false},
	} {
		if _, raw := tc.got.(*rawFile); raw != tc.raw {
			t.Errorf("%s: raw %v, want %v", tc.name, raw, tc.raw)
		}
	}
}

// TestRawFileStream: 4 MiB (many times a pipe's buffer) written raw
// arrive whole and in order through a raw read end, which then reads
// io.EOF once the write end is closed.
func TestRawFileStream(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rr, rw := rawReader(r), rawWriter(w)
	want := bytes.Repeat([]byte("0123456789abcdef"), 256<<10)
	errc := make(chan error, 1)
	go func() {
		n, err := rw.Write(want)
		if err == nil && n != len(want) {
			err = errors.New("short write")
		}
		errc <- errors.Join(err, w.Close())
	}()
	got, err := io.ReadAll(rr)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, want the %d written", len(got), len(want))
	}
}

// TestRawFileDeadlines: a raw write to a pipe nobody reads ends at the
// file's write deadline with os.ErrDeadlineExceeded and the bytes it
// wrote; a raw read of a closed file fails (with the netpoller's "use of
// closed file", which os.File reports as os.ErrClosed), never io.EOF.
func TestRawFileDeadlines(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	rw := rawWriter(w).(*rawFile)
	if err := rw.SetWriteDeadline(time.Now().Add(100 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var n int
	go func() {
		defer close(done)
		n, err = rw.Write(make([]byte, 4<<20))
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the write ignored its deadline")
	}
	if !errors.Is(err, os.ErrDeadlineExceeded) || n <= 0 || n >= 4<<20 {
		t.Errorf("write to a full pipe: %d bytes, %v; want part written and os.ErrDeadlineExceeded", n, err)
	}
	rr := rawReader(r)
	_ = r.Close()
	if _, err := rr.Read(make([]byte, 10)); err == nil || errors.Is(err, io.EOF) {
		t.Errorf("read of a closed file: %v, want an error other than io.EOF", err)
	}
}
