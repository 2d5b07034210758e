//go:build !unix

package skills

import "io/fs"

// oNonblock is 0 where named pipes cannot block an open.
const oNonblock = 0

// nlinkOf reports that the platform does not tell a file's link count.
func nlinkOf(fs.FileInfo) (nlink uint64, ok bool) { return 0, false }
