//go:build !linux

package skills

import "os"

// openSkillFile opens name and returns its modification time and size.
// A name that is not a regular file reports errNotRegular (it is
// opened without blocking, so a named pipe cannot hang the open); a
// symbolic link reports errSymlink (it is opened through an os.Root
// instead, see openLinked).
func openSkillFile(name string) (*os.File, fileInfo, error) {
	if st, err := os.Lstat(name); err == nil && st.Mode()&os.ModeSymlink != 0 {
		return nil, fileInfo{}, errSymlink
	}
	f, err := os.OpenFile(name, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, fileInfo{}, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fileInfo{}, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fileInfo{}, errNotRegular
	}
	return f, fileInfo{mod: st.ModTime(), size: st.Size()}, nil
}

// openSkillPath is openSkillFile for a NUL-terminated path.
func openSkillPath(path []byte) (*os.File, fileInfo, error) {
	return openSkillFile(string(path[:len(path)-1]))
}
