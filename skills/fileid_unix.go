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

// fileID identifies a file (device and inode) while it exists.
type fileID struct{ dev, ino uint64 }

// idOf returns the identity and link count of an os file's FileInfo; ok is
// false when the platform does not tell.
func idOf(fi fs.FileInfo) (id fileID, nlink uint64, ok bool) {
	st, isStat := fi.Sys().(*syscall.Stat_t)
	if !isStat {
		return fileID{}, 0, false
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}, uint64(st.Nlink), true
}
