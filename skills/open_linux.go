//go:build linux

package skills

import (
	"errors"
	"io"
	"syscall"
	"time"
	"unsafe"
)

// atFDCWD is AT_FDCWD (-100): paths relative to the working directory.
const atFDCWD = ^uintptr(99)

// rawFile is a file opened for one short sequential read. Regular files
// never block, so the startup path skips what os.Open adds for them on
// Linux (trying to register the descriptor with the runtime poller): with
// thousands of skills, that is a third of the per-file system calls.
type rawFile struct{ fd int }

// openSkillFile opens name and returns its modification time and size.
// It opens with O_NONBLOCK, so a named pipe never blocks the
// open, and refuses (errNotRegular) anything that is not a regular file;
// a symbolic link reports errSymlink (it is opened through an os.Root
// instead, see openLinked).
func openSkillFile(name string) (*rawFile, fileInfo, error) {
	p, err := syscall.ByteSliceFromString(name)
	if err != nil {
		return nil, fileInfo{}, err
	}
	return openSkillPath(p)
}

// openSkillPath is openSkillFile for a NUL-terminated path in a buffer
// the caller reuses: discovery opens two names in every folder, and
// converting each to a C string would be an allocation.
func openSkillPath(path []byte) (*rawFile, fileInfo, error) {
	if len(path) == 0 || path[len(path)-1] != 0 {
		return nil, fileInfo{}, syscall.EINVAL
	}
	var fd int
	var err error
	for {
		r, _, e := syscall.Syscall6(syscall.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(&path[0])),
			uintptr(syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK), 0, 0, 0)
		fd, err = int(r), nil
		if e != 0 {
			err = e
		}
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if errors.Is(err, syscall.ELOOP) {
		return nil, fileInfo{}, errSymlink
	}
	if err != nil {
		return nil, fileInfo{}, err
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return nil, fileInfo{}, err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		syscall.Close(fd)
		return nil, fileInfo{}, errNotRegular
	}
	sec, nsec := st.Mtim.Unix()
	return &rawFile{fd: fd}, fileInfo{mod: time.Unix(sec, nsec), size: st.Size}, nil
}

// Read reads from the file; 0 bytes at the end is io.EOF.
func (f *rawFile) Read(p []byte) (int, error) {
	for {
		n, err := syscall.Read(f.fd, p)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n == 0 && len(p) > 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

// Close closes the file.
func (f *rawFile) Close() error { return syscall.Close(f.fd) }
