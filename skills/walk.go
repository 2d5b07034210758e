package skills

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// The walks of discovery: a root on the operating system's file system
// (symbolic links followed once, plugin folders recognised) and a root in
// an fs.FS; both hand what they find to the loader (discover.go).

// rootOS walks a root on the operating system's file system.
func (l *loader) rootOS(w *walk) {
	r := w.r
	real := l.realRoots[w.idx]
	if real == "" {
		if _, err := os.Stat(r.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			l.discoverWarn(r.Path, "skill root cannot be read: %v", err)
		}
		return
	}
	if l.seen[real] {
		w.found = true
		return
	}
	plugin := l.pluginAbove(r.Path)
	if l.loadOS(w, r.Path, filepath.Base(real), real, plugin) {
		return
	}
	w.visiting[real] = true
	l.walkOS(w, r.Path, real, 0, plugin)
}

// pluginAbove returns the plugin a root belongs to when the root is a
// plugin's skills folder or one skill folder of it (plugin/skills[/skill]).
func (l *loader) pluginAbove(root string) string {
	parent := filepath.Dir(root)
	switch {
	case filepath.Base(root) == "skills":
		return l.pluginOS(parent)
	case filepath.Base(parent) == "skills":
		return l.pluginOS(filepath.Dir(parent))
	}
	return ""
}

func (l *loader) walkOS(w *walk, dir, realDir string, depth int, plugin string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		l.discoverWarn(dir, "folder cannot be read: %v", err)
		return
	}
	l.dirs = append(l.dirs, dir)
	for _, e := range entries {
		if e.Name() == pluginDir {
			if p := l.pluginOS(dir); p != "" {
				plugin = p
			}
			break
		}
	}
	for _, e := range entries {
		name := e.Name()
		if skip, hidden := skipFolder(name); skip {
			if hidden && e.IsDir() && len(w.hidden) < 64 {
				w.hidden = append(w.hidden, name)
			}
			continue
		}
		typ := e.Type()
		if typ&fs.ModeSymlink == 0 && !typ.IsDir() {
			continue
		}
		full := dir + string(filepath.Separator) + name
		var real string
		if typ&fs.ModeSymlink != 0 {
			st, err := os.Stat(full)
			if err != nil {
				l.discoverWarn(full, "broken symbolic link: %v", err)
				continue
			}
			if !st.IsDir() {
				continue
			}
			if real, err = filepath.EvalSymlinks(full); err != nil {
				continue
			}
			if _, inside := within(realDir, real); inside || real == realDir || w.visiting[real] {
				continue // a link to a folder being searched: a loop
			}
			w.visiting[real] = true
			if !l.linked {
				// From now on, a folder may be reached twice.
				l.linked = true
				for _, f := range l.found {
					if f.real != "" {
						l.seen[f.real] = true
					}
				}
			}
		} else {
			real = realDir + string(filepath.Separator) + name
		}
		if !l.countFolder(dir) {
			return
		}
		if (len(l.cfg.Roots) > 1 || l.linked) && l.seen[real] {
			w.found = true
			continue // reached through another symbolic link or root: loaded once
		}
		if l.loadOS(w, full, name, real, plugin) {
			continue
		}
		if depth+1 < l.cfg.MaxDepth {
			l.walkOS(w, full, real, depth+1, plugin)
		} else {
			w.deep++
		}
	}
}

// loadOS loads dir/SKILL.md (or dir/skill.md) if there is one, and reports
// whether there was.
func (l *loader) loadOS(w *walk, dir, folder, realDir, plugin string) bool {
	loc := skillLoc{dir: dir, folder: folder, name: skillFile, plugin: plugin, realDir: realDir}
	// The path is built in a reused buffer: most folders hold no skill,
	// and their names need not become strings.
	b := append(l.pathBuf[:0], dir...)
	b = append(b, filepath.Separator)
	nameAt := len(b)
	b = append(append(b, skillFile...), 0)
	l.pathBuf = b
	f, err := l.openOS(&loc, b)
	if errors.Is(err, fs.ErrNotExist) {
		loc.name = skillFileLower
		copy(b[nameAt:], skillFileLower)
		f, err = l.openOS(&loc, b)
	}
	file := string(b[:len(b)-1])
	if err != nil {
		if errors.Is(err, errOutside) {
			l.markSeen(w, realDir)
			l.found = append(l.found, found{key: file, real: realDir, entry: &cacheEntry{err: loadError(file, 0, errOutside,
				"SKILL.md is a symbolic link to a file outside its folder and outside every skill root")}})
			return true
		}
		if !errors.Is(err, fs.ErrNotExist) && err != errNotRegular {
			l.markSeen(w, realDir)
			l.found = append(l.found, found{key: file, real: realDir, entry: &cacheEntry{err: loadError(file, 0, err, "")}})
			return true
		}
		return false
	}
	l.markSeen(w, realDir)
	l.dirs = append(l.dirs, dir)
	l.load(w.idx, w.r, file, file, loc, f)
	l.found[len(l.found)-1].real = realDir
	return true
}

// markSeen records a skill folder found. With one root, a folder can be
// reached twice only through a symbolic link, and those are resolved to
// real paths before the check, so the map is only needed with several
// roots or links.
func (l *loader) markSeen(w *walk, realDir string) {
	w.found = true
	if len(l.cfg.Roots) > 1 || l.linked {
		l.seen[realDir] = true
	}
}

// openOS opens a skill's main file (path NUL-terminated), filling in
// loc.info (and loc.link* for a link into another root).
func (l *loader) openOS(loc *skillLoc, path []byte) (io.ReadCloser, error) {
	f, info, err := openSkillPath(path)
	if err == nil {
		loc.info = info
		return f, nil
	}
	if err != errSymlink {
		return nil, err
	}
	return l.openLinked(loc, string(path[:len(path)-1]))
}

func (l *loader) rootFS(w *walk) {
	r := w.r
	dir := r.Dir
	if dir == "" {
		dir = "."
	}
	if l.loadFS(w, dir, path.Base(dir), "") {
		return
	}
	l.walkFS(w, dir, 0, "")
}

func (l *loader) walkFS(w *walk, dir string, depth int, plugin string) {
	r := w.r
	entries, err := fs.ReadDir(r.FS, dir)
	if err != nil {
		if depth > 0 || !errors.Is(err, fs.ErrNotExist) {
			l.discoverWarn(l.fsName(r, dir), "folder cannot be read: %v", err)
		}
		return
	}
	for _, e := range entries {
		if e.Name() == pluginDir {
			if p := l.pluginFS(r, dir); p != "" {
				plugin = p
			}
			break
		}
	}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() {
			continue
		}
		if skip, hidden := skipFolder(name); skip {
			if hidden && len(w.hidden) < 64 {
				w.hidden = append(w.hidden, name)
			}
			continue
		}
		if !l.countFolder(l.fsName(r, dir)) {
			return
		}
		full := path.Join(dir, name)
		if l.loadFS(w, full, name, plugin) {
			continue
		}
		if depth+1 < l.cfg.MaxDepth {
			l.walkFS(w, full, depth+1, plugin)
		} else {
			w.deep++
		}
	}
}

func (l *loader) fsName(r Root, p string) string {
	if r.Label != "" {
		return r.Label + ":" + p
	}
	return p
}

func (l *loader) loadFS(w *walk, dir, folder, plugin string) bool {
	r := w.r
	for _, name := range []string{skillFile, skillFileLower} {
		p := path.Join(dir, name)
		st, err := fs.Stat(r.FS, p)
		if err != nil || !st.Mode().IsRegular() {
			continue // only regular files are opened
		}
		f, err := r.FS.Open(p)
		if err != nil {
			continue
		}
		w.found = true
		loc := skillLoc{dir: dir, folder: folder, name: name, plugin: plugin, info: fileInfo{mod: st.ModTime(), size: st.Size()}}
		l.load(w.idx, r, fmt.Sprintf("%d:%s", w.idx, p), l.fsName(r, p), loc, f)
		return true
	}
	return false
}
