//go:build !linux

package skills

import (
	"os"
	"time"
)

// openSkillFile opens name and returns its modification time and size.
// A name that is not a regular file reports errNotRegular.
func openSkillFile(name string) (*os.File, time.Time, int64, error) {
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
