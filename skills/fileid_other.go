//go:build !unix

package skills

import "io/fs"

// oNonblock is 0 where named pipes cannot block an open.
const oNonblock = 0

// fileID identifies a file (device and inode) while it exists.
type fileID struct{ dev, ino uint64 }

// idOf reports that the platform does not tell a file's identity.
func idOf(fs.FileInfo) (id fileID, nlink uint64, ok bool) { return fileID{}, 0, false }
