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
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/agent/failure"
)

// skillFile is the name of a skill's main file; skillFileLower the
// lower-case spelling the specification's reference validator also
// accepts (read when there is no SKILL.md).
const (
	skillFile      = "SKILL.md"
	skillFileLower = "skill.md"
)

// errNotRegular: a SKILL.md that is not a regular file (a folder, a device,
// a named pipe).
var errNotRegular = errors.New("not a regular file")

// errSymlink: a SKILL.md that is a symbolic link.
var errSymlink = errors.New("SKILL.md is a symbolic link")

// cacheEntry is what is known of one SKILL.md, valid while its
// modification time, size and plugin are unchanged.
type cacheEntry struct {
	modTime time.Time
	size    int64
	plugin  string
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
	real  string // the real skill folder, for OS skills
}

// skillLoc is where a skill's SKILL.md was found and how to open it again.
type skillLoc struct {
	dir, folder string
	// name is the file's name in dir (SKILL.md or skill.md).
	name string
	// linkRoot and linkRel, when linkRoot is set, locate a SKILL.md that
	// is a symbolic link into another configured root: the real root
	// folder and the target's path within it.
	linkRoot, linkRel string
	realDir           string
	plugin            string
	info              fileInfo
}

// parseJob is one SKILL.md to read and parse; the job owns f.
type parseJob struct {
	e     *cacheEntry
	f     io.ReadCloser
	file  string
	loc   skillLoc
	label string
	idx   int
}

// jobBatch is the number of files handed to a parse worker at once. Each
// job holds its file open, so at most (2*loadWorkers+1)*jobBatch files
// are open during a load (batches queued, being parsed, being filled).
const jobBatch = 16

// walk is the state of one root's discovery.
type walk struct {
	idx int
	r   Root
	// visiting holds the real grouping folders of this root already
	// searched (symbolic link loops, and folders reached twice).
	visiting map[string]bool
	// What was not searched, to say so when nothing was found.
	hidden []string
	deep   int
	found  bool
}

// loader runs one discovery pass over the roots.
type loader struct {
	cfg *Config
	old map[string]*cacheEntry
	// cache holds this pass's entries.
	cache map[string]*cacheEntry
	buf   []byte
	// seen holds the real skill folders loaded (each is loaded once,
	// whichever root or link reaches it first).
	seen map[string]bool
	// realRoots are the real (symbolic-link-free) paths of the OS roots,
	// "" for fs.FS roots and missing ones; realDirs caches the real paths
	// of the roots' parents.
	realRoots []string
	realDirs  map[string]string
	osRoots   map[int]*os.Root
	// pathBuf builds the paths discovery opens; linked is set once a
	// symbolic link to a folder was followed.
	pathBuf []byte
	linked  bool
	// pluginNames caches the plugin manifests read, by file.
	pluginNames map[string]string
	dirs        []string // OS directories visited (for the watcher)
	found       []found
	jobs        chan []parseJob
	batch       []parseJob
	wg          sync.WaitGroup
	warns       []Warning
	nDirs       int
	capped      bool
}

func newLoader(cfg *Config, old map[string]*cacheEntry) *loader {
	return &loader{cfg: cfg, old: old, cache: make(map[string]*cacheEntry, len(old)),
		buf: make([]byte, 0, 4096), seen: map[string]bool{}, realDirs: map[string]string{}}
}

// searchedDot are the hidden folders searched: the agents' own folders
// (.claude/skills, .agents/skills and the like) and the grouping folders
// of skill collections (.curated, .system, .experimental).
var searchedDot = map[string]bool{
	".agents": true, ".claude": true, ".codex": true, ".cursor": true, ".gemini": true, ".github": true,
	".opencode": true, ".curated": true, ".system": true, ".experimental": true,
}

// skipFolder reports folders discovery does not search; hidden is true
// for hidden folders (reported when a root holds no skill).
func skipFolder(name string) (skip, hidden bool) {
	if strings.HasPrefix(name, ".") {
		return !searchedDot[name], true
	}
	return name == "node_modules" || name == "__pycache__", false
}

func (l *loader) discoverWarn(file, format string, args ...any) {
	l.warns = append(l.warns, newWarning(file, 0, warnDiscovery, format, args...))
}

// run discovers and loads every root, in precedence order. With more than
// one worker, discovery stays in the calling goroutine (it decides the
// order and the shadowing) while the workers read and parse the
// frontmatters; they are all done when run returns.
func (l *loader) run() {
	if n := l.cfg.loadWorkers; n > 1 {
		l.jobs = make(chan []parseJob, n)
		for range n {
			l.wg.Add(1)
			go func() {
				defer l.wg.Done()
				buf := make([]byte, 0, 4096)
				for batch := range l.jobs {
					for _, j := range batch {
						l.parse(j, &buf)
					}
				}
			}()
		}
		defer func() {
			if len(l.batch) > 0 {
				l.jobs <- l.batch
			}
			close(l.jobs)
			l.wg.Wait()
		}()
	}
	defer func() {
		for _, r := range l.osRoots {
			r.Close()
		}
	}()
	l.realRoots = make([]string, len(l.cfg.Roots))
	for i, r := range l.cfg.Roots {
		if r.Path != "" {
			l.realRoots[i] = l.realRoot(r.Path)
		}
	}
	for i, r := range l.cfg.Roots {
		w := &walk{idx: i, r: r, visiting: map[string]bool{}}
		if r.Path != "" {
			l.rootOS(w)
		} else {
			l.rootFS(w)
		}
		if !w.found {
			l.nothingFound(w)
		}
	}
}

// nothingFound says, for a root that holds no skill, what was not
// searched and why.
func (l *loader) nothingFound(w *walk) {
	if len(w.hidden) == 0 && w.deep == 0 {
		return
	}
	var why []string
	if len(w.hidden) > 0 {
		sort.Strings(w.hidden)
		names := w.hidden
		if len(names) > 8 {
			names = append(names[:8:8], "…")
		}
		why = append(why, fmt.Sprintf("hidden folders (%s) are not searched", strings.Join(names, ", ")))
	}
	if w.deep > 0 {
		why = append(why, fmt.Sprintf("%d folder(s) at the depth limit of %d were not searched (Config.MaxDepth, skillcheck -depth)", w.deep, l.cfg.MaxDepth))
	}
	where := w.r.Path
	if where == "" {
		where = l.fsName(w.r, w.r.Dir)
	}
	l.discoverWarn(where, "no SKILL.md found under this root: %s", strings.Join(why, "; "))
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

// load reads one SKILL.md's metadata (in a worker, when there are
// several), or reuses the cached one when the file's modification time,
// size and plugin are unchanged. load owns f.
func (l *loader) load(idx int, r Root, key, file string, loc skillLoc, f io.ReadCloser) {
	mod, size := loc.info.mod, loc.info.size
	if e := l.old[key]; e != nil && e.modTime.Equal(mod) && e.size == size && e.plugin == loc.plugin {
		f.Close()
		l.cache[key] = e
		l.found = append(l.found, found{key: key, entry: e})
		return
	}
	e := &cacheEntry{modTime: mod, size: size, plugin: loc.plugin}
	l.cache[key] = e
	l.found = append(l.found, found{key: key, entry: e})
	if size > l.cfg.MaxSkillBytes {
		f.Close()
		e.err = loadError(file, 0, errTooLarge, fmt.Sprintf("%d bytes, over the cap of %d (Config.MaxSkillBytes)", size, l.cfg.MaxSkillBytes))
		return
	}
	j := parseJob{e: e, f: f, file: file, loc: loc, label: r.Label, idx: idx}
	if l.jobs != nil {
		// Jobs go to the workers in batches: one channel operation (and
		// at most one wake-up) per jobBatch files, not per file.
		if l.batch == nil {
			l.batch = make([]parseJob, 0, jobBatch)
		}
		l.batch = append(l.batch, j)
		if len(l.batch) == jobBatch {
			l.jobs <- l.batch
			l.batch = nil
		}
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
	s, err := l.read(j.f, j.file, j.loc.folder, buf)
	if s != nil {
		s.Dir, s.Root, s.rootIdx, s.modTime, s.size = j.loc.dir, j.label, j.idx, j.e.modTime, j.e.size
		s.fileName, s.linkRoot, s.linkRel, s.realDir = j.loc.name, j.loc.linkRoot, j.loc.linkRel, j.loc.realDir
		if j.loc.name != skillFile {
			s.Warnings = append(s.Warnings, newWarning(j.file, 0, warnSkillFileName, "the file is named %s; the specification names it SKILL.md (case-sensitive file systems and stricter agents miss it)", j.loc.name))
		}
		if j.loc.plugin != "" {
			s.Name = j.loc.plugin + ":" + s.Name
		}
	}
	j.e.skill, j.e.err = s, err
}

// read reads f in small chunks until the frontmatter's closing delimiter
// and parses it.
func (l *loader) read(f io.Reader, file, folder string, bufp *[]byte) (*Skill, error) {
	buf := (*bufp)[:0]
	opts := parseOptions{Folder: folder, Strict: l.cfg.Strict, Lint: l.cfg.Lint}
	for {
		if len(buf) == cap(buf) {
			if len(buf) >= l.cfg.MaxFrontmatterBytes {
				return nil, loadError(file, 0, errTooLarge, fmt.Sprintf("no closing --- within the first %d bytes (Config.MaxFrontmatterBytes)", l.cfg.MaxFrontmatterBytes))
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
