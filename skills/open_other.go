//go:build !linux

package skills

import (
	"os"
	"time"
)

// openSkillFile opens name and returns its modification time and size.
// A name that is not a regular file reports errNotRegular; a symbolic link
// reports errSymlink (it is opened through the folder's os.Root instead,
// see openLinked).
func openSkillFile(name string) (*os.File, time.Time, int64, error) {
	if st, err := os.Lstat(name); err == nil && st.Mode()&os.ModeSymlink != 0 {
		return nil, time.Time{}, 0, errSymlink
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, time.Time{}, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, time.Time{}, 0, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, time.Time{}, 0, errNotRegular
	}
	return f, st.ModTime(), st.Size(), nil
}
