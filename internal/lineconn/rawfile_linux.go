package lineconn

import (
	"io"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// rawFile reads or writes a non-blocking pipe in the runtime's netpoller
// with read(2) and write(2) made by syscall.RawSyscall, which, unlike the
// os.File methods, does not hand the processor over for the call's
// duration. A non-blocking descriptor's calls never block, so that
// hand-over buys nothing, and it costs: in Go 1.26 the first system call
// after the process was idle wakes the sysmon thread from its deep sleep
// and sets it polling every 20 µs again, which for a process idle between
// messages (a stdio gateway: twice a call) was about a fifth of its CPU
// (docs/performance.md, "Gateway"). When the pipe is not ready the
// goroutine waits in the netpoller under the file's deadlines, as an
// os.File's Read and Write do.
type rawFile struct {
	rc syscall.RawConn
	f  fileDeadlines
}

// fileDeadlines is what a file in the netpoller offers: an *os.File, or
// a type embedding one.
type fileDeadlines interface {
	SyscallConn() (syscall.RawConn, error)
	SetReadDeadline(time.Time) error
	SetWriteDeadline(time.Time) error
}

// rawReader is r read as a rawFile if it is a non-blocking descriptor in
// the netpoller, else r.
func rawReader(r io.Reader) io.Reader {
	if f, ok := r.(fileDeadlines); ok && f.SetReadDeadline(time.Time{}) == nil {
		if rf := newRawFile(f); rf != nil {
			return rf
		}
	}
	return r
}

// rawWriter is w written as a rawFile if it is a non-blocking descriptor
// in the netpoller, else w.
func rawWriter(w io.Writer) io.Writer {
	if f, ok := w.(fileDeadlines); ok && f.SetWriteDeadline(time.Time{}) == nil {
		if rf := newRawFile(f); rf != nil {
			return rf
		}
	}
	return w
}

// newRawFile is f as a rawFile, or nil if its descriptor blocks.
func newRawFile(f fileDeadlines) *rawFile {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	nonblock := false
	if err := rc.Control(func(fd uintptr) {
		fl, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		nonblock = e == 0 && fl&syscall.O_NONBLOCK != 0
	}); err != nil || !nonblock {
		return nil
	}
	return &rawFile{rc: rc, f: f}
}

// Read reads up to len(p) bytes, waiting in the netpoller until there are
// some.
func (f *rawFile) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := f.rc.Read(func(fd uintptr) bool {
		for {
			r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // wait until readable
			}
			n, errno = int(r), e
			return true
		}
	})
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, os.NewSyscallError("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// Write writes all of p, waiting in the netpoller while the pipe is full
// (until the file's write deadline).
func (f *rawFile) Write(p []byte) (int, error) {
	var n int
	var errno syscall.Errno
	err := f.rc.Write(func(fd uintptr) bool {
		for n < len(p) {
			r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[n])), uintptr(len(p)-n))
			switch e {
			case 0:
				n += int(r)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false // wait until writable
			default:
				errno = e
				return true
			}
		}
		return true
	})
	switch {
	case err != nil:
		return n, err
	case errno != 0:
		return n, os.NewSyscallError("write", errno)
	}
	return n, nil
}

// SetWriteDeadline sets the file's write deadline (lineconn bounds its
// writes with it).
func (f *rawFile) SetWriteDeadline(t time.Time) error { return f.f.SetWriteDeadline(t) }
