package skills

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-dev/switchboard/failure"
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
	opts := parseOptions{Folder: folder, Strict: l.cfg.Strict, Lint: l.cfg.Lint, Guards: l.cfg.Guards}
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
