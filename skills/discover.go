package skills

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/agent/failure"
)

// skillFile is the name of a skill's main file.
const skillFile = "SKILL.md"

// errNotRegular: a SKILL.md that is not a regular file (a folder, a device).
var errNotRegular = errors.New("not a regular file")

// errSymlink: a SKILL.md that is a symbolic link.
var errSymlink = errors.New("SKILL.md is a symbolic link")

// cacheEntry is what is known of one SKILL.md, valid while its
// modification time and size are unchanged.
type cacheEntry struct {
	modTime time.Time
	size    int64
	skill   *Skill
	err     error
	// body is loaded on activation.
	body *Body
}

// found is a SKILL.md located by discovery; entry is filled in (maybe by
// a parse worker) by the time the loader's run returns.
type found struct {
	key   string
	entry *cacheEntry
}

// parseJob is one SKILL.md to read and parse; the job owns f.
type parseJob struct {
	e                 *cacheEntry
	f                 io.ReadCloser
	file, folder, dir string
	label             string
	idx               int
}

// loader runs one discovery pass over the roots.
type loader struct {
	cfg    *Config
	old    map[string]*cacheEntry
	cache  map[string]*cacheEntry
	buf    []byte
	seen   map[string]bool
	dirs   []string // OS directories visited (for the watcher)
	found  []found
	jobs   chan parseJob
	wg     sync.WaitGroup
	warns  []Warning
	nDirs  int
	capped bool
}

func newLoader(cfg *Config, old map[string]*cacheEntry) *loader {
	return &loader{cfg: cfg, old: old, cache: make(map[string]*cacheEntry, len(old)),
		buf: make([]byte, 0, 4096), seen: map[string]bool{}}
}

func skipFolder(name string) bool {
	return strings.HasPrefix(name, ".") || name == "node_modules" || name == "__pycache__"
}

func (l *loader) discoverWarn(file, format string, args ...any) {
	l.warns = append(l.warns, newWarning(file, 0, WarnDiscovery, format, args...))
}

// run discovers and loads every root, in precedence order. With more than
// one worker, discovery stays in the calling goroutine (it decides the
// order and the shadowing) while the workers read and parse the
// frontmatters; they are all done when run returns.
func (l *loader) run() {
	if n := l.cfg.LoadWorkers; n > 1 {
		l.jobs = make(chan parseJob, 4*n)
		for range n {
			l.wg.Add(1)
			go func() {
				defer l.wg.Done()
				buf := make([]byte, 0, 4096)
				for j := range l.jobs {
					l.parse(j, &buf)
				}
			}()
		}
		defer func() {
			close(l.jobs)
			l.wg.Wait()
		}()
	}
	for i, r := range l.cfg.Roots {
		if r.Path != "" {
			l.rootOS(i, r)
		} else {
			l.rootFS(i, r)
		}
	}
}

func (l *loader) countFolder(where string) bool {
	l.nDirs++
	if l.nDirs > l.cfg.MaxFolders {
		if !l.capped {
			l.capped = true
			l.discoverWarn(where, "more than %d folders under the skill roots; the rest were not searched (Config.MaxFolders)", l.cfg.MaxFolders)
		}
		return false
	}
	return true
}

func (l *loader) rootOS(idx int, r Root) {
	st, err := os.Stat(r.Path)
	if err != nil || !st.IsDir() {
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			l.discoverWarn(r.Path, "skill root cannot be read: %v", err)
		}
		return
	}
	real, err := filepath.EvalSymlinks(r.Path)
	if err != nil {
		real = r.Path
	}
	if l.seen[real] {
		return
	}
	l.seen[real] = true
	if l.loadOS(idx, r, r.Path, filepath.Base(real)) {
		return
	}
	l.walkOS(idx, r, r.Path, real, 0)
}

func (l *loader) walkOS(idx int, r Root, dir, realDir string, depth int) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		l.discoverWarn(dir, "folder cannot be read: %v", err)
		return
	}
	l.dirs = append(l.dirs, dir)
	for _, e := range entries {
		name := e.Name()
		if skipFolder(name) {
			continue
		}
		full := dir + string(filepath.Separator) + name
		real := realDir + string(filepath.Separator) + name
		typ := e.Type()
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
		} else if !typ.IsDir() {
			continue
		}
		if !l.countFolder(dir) {
			return
		}
		if l.seen[real] {
			continue // reached through another symbolic link: loaded once
		}
		l.seen[real] = true
		if l.loadOS(idx, r, full, name) {
			continue
		}
		if depth+1 < l.cfg.MaxDepth {
			l.walkOS(idx, r, full, real, depth+1)
		}
	}
}

// loadOS loads dir/SKILL.md if there is one, and reports whether there was.
func (l *loader) loadOS(idx int, r Root, dir, folder string) bool {
	file := dir + string(filepath.Separator) + skillFile
	var f io.ReadCloser
	rf, mod, size, err := openSkillFile(file)
	if err == nil {
		f = rf
	} else if err == errSymlink {
		f, mod, size, err = openLinked(dir)
	}
	if err != nil {
		if errors.Is(err, ErrOutside) {
			l.found = append(l.found, found{key: file, entry: &cacheEntry{err: loadError(file, 0, ErrOutside,
				"SKILL.md is a symbolic link to a file outside its folder")}})
			return true
		}
		if !errors.Is(err, fs.ErrNotExist) && err != errNotRegular {
			l.found = append(l.found, found{key: file, entry: &cacheEntry{err: loadError(file, 0, err, "")}})
			return true
		}
		return false
	}
	l.dirs = append(l.dirs, dir)
	l.load(idx, r, file, file, dir, folder, mod, size, f)
	return true
}

// openLinked opens a SKILL.md that is a symbolic link through an os.Root
// of its folder, so that a link leaving the folder is refused (ErrOutside)
// as it is for every bundled file, and never read.
func openLinked(dir string) (io.ReadCloser, time.Time, int64, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, time.Time{}, 0, err
	}
	defer root.Close()
	f, err := root.Open(skillFile)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, time.Time{}, 0, err
		}
		return nil, time.Time{}, 0, fmt.Errorf("%w: %w", ErrOutside, err)
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = errNotRegular
		}
		return nil, time.Time{}, 0, err
	}
	return f, st.ModTime(), st.Size(), nil
}

func (l *loader) rootFS(idx int, r Root) {
	dir := r.Dir
	if dir == "" {
		dir = "."
	}
	if l.loadFS(idx, r, dir, path.Base(dir)) {
		return
	}
	l.walkFS(idx, r, dir, 0)
}

func (l *loader) walkFS(idx int, r Root, dir string, depth int) {
	entries, err := fs.ReadDir(r.FS, dir)
	if err != nil {
		if depth > 0 || !errors.Is(err, fs.ErrNotExist) {
			l.discoverWarn(l.fsName(r, dir), "folder cannot be read: %v", err)
		}
		return
	}
	for _, e := range entries {
		name := e.Name()
		if skipFolder(name) || !e.IsDir() {
			continue
		}
		if !l.countFolder(l.fsName(r, dir)) {
			return
		}
		full := path.Join(dir, name)
		if l.loadFS(idx, r, full, name) {
			continue
		}
		if depth+1 < l.cfg.MaxDepth {
			l.walkFS(idx, r, full, depth+1)
		}
	}
}

func (l *loader) fsName(r Root, p string) string {
	if r.Label != "" {
		return r.Label + ":" + p
	}
	return p
}

func (l *loader) loadFS(idx int, r Root, dir, folder string) bool {
	p := path.Join(dir, skillFile)
	f, err := r.FS.Open(p)
	if err != nil {
		return false
	}
	st, err := f.Stat()
	if err != nil || st.IsDir() {
		f.Close()
		return false
	}
	l.load(idx, r, fmt.Sprintf("%d:%s", idx, p), l.fsName(r, p), dir, folder, st.ModTime(), st.Size(), f)
	return true
}

// load reads one SKILL.md's metadata (in a worker, when there are
// several), or reuses the cached one when the file's modification time and
// size are unchanged. load owns f.
func (l *loader) load(idx int, r Root, key, file, dir, folder string, mod time.Time, size int64, f io.ReadCloser) {
	if e := l.old[key]; e != nil && e.modTime.Equal(mod) && e.size == size {
		f.Close()
		l.cache[key] = e
		l.found = append(l.found, found{key: key, entry: e})
		return
	}
	e := &cacheEntry{modTime: mod, size: size}
	l.cache[key] = e
	l.found = append(l.found, found{key: key, entry: e})
	if size > l.cfg.MaxSkillBytes {
		f.Close()
		e.err = loadError(file, 0, ErrTooLarge, fmt.Sprintf("%d bytes, over the cap of %d (Config.MaxSkillBytes)", size, l.cfg.MaxSkillBytes))
		return
	}
	j := parseJob{e: e, f: f, file: file, folder: folder, dir: dir, label: r.Label, idx: idx}
	if l.jobs != nil {
		l.jobs <- j
		return
	}
	l.parse(j, &l.buf)
}

// parse reads and parses one job's file into its cache entry.
func (l *loader) parse(j parseJob, buf *[]byte) {
	defer j.f.Close()
	defer func() {
		if v := recover(); v != nil {
			j.e.skill = nil
			j.e.err = &failure.Error{Kind: failure.Panic, Source: failure.SourceSkill, Op: "load",
				Message: j.file + ": the parser crashed", Err: &failure.PanicError{Value: v, Stack: debug.Stack()}}
		}
	}()
	s, err := l.read(j.f, j.file, j.folder, buf)
	if s != nil {
		s.Dir, s.Root, s.rootIdx, s.modTime, s.size = j.dir, j.label, j.idx, j.e.modTime, j.e.size
	}
	j.e.skill, j.e.err = s, err
}

// read reads f in small chunks until the frontmatter's closing delimiter
// and parses it.
func (l *loader) read(f io.Reader, file, folder string, bufp *[]byte) (*Skill, error) {
	buf := (*bufp)[:0]
	opts := ParseOptions{Folder: folder, Strict: l.cfg.Strict, Lint: l.cfg.Lint}
	for {
		if len(buf) == cap(buf) {
			if len(buf) >= l.cfg.MaxFrontmatterBytes {
				return nil, loadError(file, 0, ErrTooLarge, fmt.Sprintf("no closing --- within the first %d bytes (Config.MaxFrontmatterBytes)", l.cfg.MaxFrontmatterBytes))
			}
			nb := make([]byte, len(buf), 2*cap(buf))
			copy(nb, buf)
			buf = nb
			*bufp = buf
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		eof := errors.Is(err, io.EOF)
		if err != nil && !eof {
			return nil, loadError(file, 0, err, "")
		}
		if n == 0 && !eof {
			continue
		}
		s, need, perr := parseHeader(file, buf, eof, opts)
		if !need {
			if s != nil && perr != nil {
				s = nil
			}
			return s, perr
		}
	}
}
