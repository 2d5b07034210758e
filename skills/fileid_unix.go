//go:build unix

package skills

import (
	"io/fs"
	"syscall"
)

// oNonblock opens without waiting: a named pipe (FIFO) opened for reading
// would otherwise block the open until a writer appears. Reads of regular
// files are unaffected.
const oNonblock = syscall.O_NONBLOCK

// nlinkOf returns the link count of an os file's FileInfo; ok is false
// when the platform does not tell.
func nlinkOf(fi fs.FileInfo) (nlink uint64, ok bool) {
	st, isStat := fi.Sys().(*syscall.Stat_t)
	if !isStat {
		return 0, false
	}
	return uint64(st.Nlink), true
}
