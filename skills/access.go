package skills

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Access to a loaded skill's folder. Every access opens the folder anew
// and uses the open handles, never the path again, so that a folder or
// file swapped for a symbolic link after loading is not followed out of
// the skill roots:
//
//   - a skill folder inside a configured root is opened through an
//     os.Root of that root (os.Root follows symbolic links only inside
//     it);
//   - a skill folder that is a root itself, or that discovery reached
//     through a symbolic link to a folder outside the roots, is opened by
//     its real path, and must still be a folder (not a link) holding the
//     same folder that was opened;
//   - files are opened without blocking (a named pipe cannot hang a
//     call), and only regular files are read.

// errSwapped: a skill folder replaced since it was loaded.
var errSwapped = errors.New("the skill folder was replaced since it was loaded (reload the skills)")

// errHardLink: a bundled file with several hard links.
var errHardLink = errors.New("the file has several hard links; it may be a link to a file outside the skill folder")

// skillDir is an opened skill folder: root for OS skills, fsys for both.
type skillDir struct {
	root *os.Root
	fsys fs.FS
	s    *Skill
	t    *Toolset
}

func (d *skillDir) close() {
	if d.root != nil {
		d.root.Close()
	}
}

// openSkill opens the skill's folder (see above).
func (t *Toolset) openSkill(s *Skill) (*skillDir, error) {
	r := t.cfg.Roots[s.rootIdx]
	if r.Path == "" {
		sub, err := fs.Sub(r.FS, s.Dir)
		if err != nil {
			return nil, err
		}
		return &skillDir{fsys: sub, s: s, t: t}, nil
	}
	real := s.realDir
	if real == "" {
		real = s.Dir
	}
	for _, rr := range t.realRoots() {
		rel, ok := within(real, rr)
		if !ok {
			continue
		}
		top, err := os.OpenRoot(rr)
		if err != nil {
			return nil, err
		}
		root, err := top.OpenRoot(rel)
		top.Close()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %w", errOutside, err)
		}
		return &skillDir{root: root, fsys: root.FS(), s: s, t: t}, nil
	}
	return openExact(real, s, t)
}

// openExact opens the folder at real, which must be a folder itself (not
// a symbolic link) and the very one opened.
func openExact(real string, s *Skill, t *Toolset) (*skillDir, error) {
	before, err := os.Lstat(real)
	if err != nil {
		return nil, err
	}
	if !before.IsDir() {
		return nil, fmt.Errorf("%w: %w", errOutside, errSwapped)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, err
	}
	after, err := root.Stat(".")
	if err != nil || !os.SameFile(before, after) {
		root.Close()
		return nil, fmt.Errorf("%w: %w", errOutside, errSwapped)
	}
	return &skillDir{root: root, fsys: root.FS(), s: s, t: t}, nil
}

// realRoots returns the real paths of the OS roots, resolved once.
func (t *Toolset) realRoots() []string {
	t.realOnce.Do(func() {
		l := newLoader(&t.cfg, nil)
		t.realPaths = make([]string, len(t.cfg.Roots))
		for i, r := range t.cfg.Roots {
			if r.Path != "" {
				t.realPaths[i] = l.realRoot(r.Path)
			}
		}
	})
	return t.realPaths
}

// openFile opens a regular file of the folder without blocking, and
// returns it with its FileInfo. With noHardLinks, a file with several hard
// links is refused where the platform tells.
func (d *skillDir) openFile(name string, noHardLinks bool) (fs.File, fs.FileInfo, error) {
	var f fs.File
	if d.root != nil {
		of, err := d.root.OpenFile(name, os.O_RDONLY|oNonblock, 0)
		if err != nil {
			return nil, nil, err
		}
		f = of
	} else {
		// An fs.FS offers no way to open without blocking: only
		// regular files are opened.
		st, err := fs.Stat(d.fsys, name)
		if err != nil {
			return nil, nil, err
		}
		if !st.Mode().IsRegular() {
			return nil, st, errNotRegular
		}
		if f, err = d.fsys.Open(name); err != nil {
			return nil, nil, err
		}
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, st, errNotRegular
	}
	if nlink, ok := nlinkOf(st); ok && noHardLinks && nlink > 1 {
		f.Close()
		return nil, st, errHardLink
	}
	return f, st, nil
}

// openMain opens the skill's SKILL.md: in its folder, or through the root
// holding the target of a SKILL.md linked into another root.
func (d *skillDir) openMain() (fs.File, fs.FileInfo, error) {
	s := d.s
	if s.linkRoot == "" || d.root == nil {
		name := s.fileName
		if name == "" {
			name = skillFile
		}
		return d.openFile(name, false)
	}
	root, err := os.OpenRoot(s.linkRoot)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	f, st, err := openRootFile(root, s.linkRel)
	if err != nil {
		return nil, nil, err
	}
	return f, st, nil
}

// readAllCapped reads f whole, refusing more than max bytes.
func readAllCapped(f io.Reader, size, max int64) ([]byte, error) {
	if size > max {
		return nil, errOverCap
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, errOverCap
	}
	return data, nil
}
