package skills

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Symbolic links met by discovery, and the os.Root openings they need.

// fileInfo is what discovery needs of an opened SKILL.md.
type fileInfo struct {
	mod  time.Time
	size int64
}

// realRoot resolves a root's symbolic links, resolving each parent folder
// once however many roots it holds ("" when the root is not a folder).
func (l *loader) realRoot(p string) string {
	st, err := os.Lstat(p)
	if err != nil {
		return ""
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		if st, err = os.Stat(p); err != nil || !st.IsDir() {
			return ""
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return ""
		}
		return real
	}
	if !st.IsDir() {
		return ""
	}
	parent := filepath.Dir(p)
	rp, ok := l.realDirs[parent]
	if !ok {
		if rp, err = filepath.EvalSymlinks(parent); err != nil {
			rp = parent
		}
		l.realDirs[parent] = rp
	}
	return filepath.Join(rp, filepath.Base(p))
}

// openLinked opens a SKILL.md that is a symbolic link: through an os.Root
// of its folder when the link stays in the folder, else through an os.Root
// of the configured root that holds its target (skills shared between
// plugins). A link whose target is in no root is refused (errOutside) and
// never read. Opening through os.Root means the target cannot be swapped
// for one outside between the check and the read.
func (l *loader) openLinked(loc *skillLoc, file string) (io.ReadCloser, error) {
	f, st, err := openInRoot(loc.dir, loc.name)
	if err == nil {
		loc.info = fileInfo{mod: st.ModTime(), size: st.Size()}
		return f, nil
	}
	if errors.Is(err, fs.ErrNotExist) || err == errNotRegular {
		return nil, err
	}
	target, err := filepath.EvalSymlinks(file)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errOutside, err)
	}
	for i, rr := range l.realRoots {
		rel, ok := within(target, rr)
		if !ok {
			continue
		}
		root, err := l.osRoot(i)
		if err != nil {
			continue
		}
		f, st, err := openRootFile(root, rel)
		if err == nil {
			loc.info = fileInfo{mod: st.ModTime(), size: st.Size()}
			loc.linkRoot, loc.linkRel = rr, rel
			return f, nil
		}
		if err == errNotRegular {
			return nil, err
		}
	}
	return nil, errOutside
}

// within returns p relative to dir when p is strictly inside dir.
func within(p, dir string) (string, bool) {
	if dir == "" || len(p) <= len(dir)+1 || !strings.HasPrefix(p, dir) || p[len(dir)] != filepath.Separator {
		return "", false
	}
	return p[len(dir)+1:], true
}

func (l *loader) osRoot(i int) (*os.Root, error) {
	if r := l.osRoots[i]; r != nil {
		return r, nil
	}
	r, err := os.OpenRoot(l.realRoots[i])
	if err != nil {
		return nil, err
	}
	if l.osRoots == nil {
		l.osRoots = map[int]*os.Root{}
	}
	l.osRoots[i] = r
	return r, nil
}

// openInRoot opens dir/name through an os.Root of dir.
func openInRoot(dir, name string) (*os.File, fs.FileInfo, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	return openRootFile(root, name)
}

// openRootFile opens a regular file through root, without blocking on a
// named pipe, and returns it with its FileInfo; a path leaving the root is
// errOutside.
func openRootFile(root *os.Root, name string) (*os.File, fs.FileInfo, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("%w: %w", errOutside, err)
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = errNotRegular
		}
		return nil, nil, err
	}
	return f, st, nil
}
