package skills

import (
	"context"
	"encoding/binary"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
)

// Config configures a Toolset. Zero values mean the defaults shown.
type Config struct {
	// Name is the toolset's name (default "skills"); it is also the Name of
	// the tools' provenance.
	Name string
	// Roots are searched in precedence order: a skill found in an earlier
	// root shadows a skill of the same name found later (reported in
	// Shadowed and as a warning).
	Roots []Root
	// Strict refuses skills that deviate from the Agent Skills
	// specification in any way; the default is lenient (warnings).
	Strict bool
	// Lint adds the warnings only strict mode gives (unknown fields)
	// without refusing more than lenient mode does: what a linter such as
	// skillcheck needs. Strict takes precedence.
	Lint bool
	// ToolPrefix is prepended to the tool names (activate_skill,
	// read_skill_file, run_skill_script), to run several skill toolsets in
	// one agent.
	ToolPrefix string
	// CatalogBudget bounds the catalog given to the system prompt, in
	// characters (default 12,000).
	CatalogBudget int
	// MaxDepth bounds how deep under a root skill folders are searched
	// (default 6: deep enough for marketplace/plugins/<plugin>/skills/<skill>
	// and .claude/skills/<skill>; the Agent Skills guide suggests 4 to 6).
	MaxDepth int
	// MaxFolders bounds the folders examined per discovery (default 50,000).
	MaxFolders int
	// MaxSkillBytes caps the size of a SKILL.md (default 1 MiB).
	MaxSkillBytes int64
	// MaxFrontmatterBytes caps the frontmatter read at startup (default
	// 64 KiB).
	MaxFrontmatterBytes int
	// MaxReadBytes caps what one read_skill_file call returns (default
	// 64 KiB; larger files are read in pages with "offset"). The agent's
	// Config.MaxResultBytes still caps the text the model is given.
	MaxReadBytes int
	// MaxListedFiles caps the bundled files listed on activation (default
	// 200).
	MaxListedFiles int
	// ToolAliases maps allowed-tools names to tool-name patterns of this
	// agent, e.g. {"Bash": {"mcp__shell__*"}, "WebFetch": {"fetch"}}. Only
	// exact tool names and MCP server-scoped prefixes are granted; see
	// docs/skills.md for the mapping.
	ToolAliases map[string][]string
	// Guards are the guards a skill may declare, by name, in its SKILL.md
	// (metadata key switchboard.guards, e.g. guard.Named() of agent/guard):
	// they check the calls and results of the skill's tools
	// (activate_skill, read_skill_file, run_skill_script for that skill)
	// and, once it is activated in a session, of the tools its
	// allowed-tools grant. A name not in the map is a warning
	// (guard-unknown), a refusal under Strict. See docs/skills.md.
	Guards map[string]agent.Guard
	// Scripts enables the run_skill_script tool (off by default). Each run
	// is a permission ask; see docs/skills.md.
	Scripts bool
	// ScriptTimeout bounds one script run (default 60s); the script's
	// process group is killed when it passes or the call is cancelled. The
	// agent's tool-call timeout (agent.Config.ToolTimeout) bounds the whole
	// call too: the shorter one wins.
	ScriptTimeout time.Duration
	// ScriptOutputBytes caps the stdout and the stderr kept of one run, each
	// (default 32 KiB).
	ScriptOutputBytes int
	// ScriptEnv adds variables to the scrubbed environment of scripts.
	ScriptEnv map[string]string
	// Watch starts a watcher (fsnotify) that reloads the skills when a root
	// or skill folder changes and reports it on Changed. Call Close to stop
	// it.
	Watch bool
	// Debounce is how long the watcher waits for changes to settle
	// (default 250ms).
	Debounce time.Duration
	// Policy handles failures: refused skills, watcher errors (nil:
	// failure.Default, asked at each use; an agent the toolset is added to
	// does not change it).
	Policy failure.Policy
	// Logger receives warnings and events (nil: none).
	Logger *zerolog.Logger

	// loadWorkers is the number of goroutines that read and parse
	// frontmatters during a load (default GOMAXPROCS, at most 4; 1 parses
	// in the calling goroutine). They belong to the load and are done when
	// New or Reload returns. Set by the package's benchmarks only.
	loadWorkers int
}

func (c *Config) defaults() {
	if c.Name == "" {
		c.Name = "skills"
	}
	if c.CatalogBudget <= 0 {
		c.CatalogBudget = 12_000
	}
	if c.MaxDepth <= 0 {
		c.MaxDepth = 6
	}
	if c.MaxFolders <= 0 {
		c.MaxFolders = 50_000
	}
	if c.loadWorkers <= 0 {
		c.loadWorkers = min(runtime.GOMAXPROCS(0), 4)
	}
	if c.MaxSkillBytes <= 0 {
		c.MaxSkillBytes = 1 << 20
	}
	if c.MaxFrontmatterBytes <= 0 {
		c.MaxFrontmatterBytes = 64 << 10
	}
	if c.MaxReadBytes <= 0 {
		c.MaxReadBytes = 64 << 10
	}
	if c.MaxListedFiles <= 0 {
		c.MaxListedFiles = 200
	}
	if c.ScriptTimeout <= 0 {
		c.ScriptTimeout = 60 * time.Second
	}
	if c.ScriptOutputBytes <= 0 {
		c.ScriptOutputBytes = 32 << 10
	}
	if c.Debounce <= 0 {
		c.Debounce = 250 * time.Millisecond
	}
}

// Shadow reports a skill hidden by a higher-precedence skill of the same
// name.
type Shadow struct {
	// Name is the skill name both declare.
	Name string `json:"name"`
	// File is the hidden SKILL.md; By is the one that is used.
	File string `json:"file"`
	By   string `json:"by"`
}

// snapshot is one consistent view of the loaded skills.
type snapshot struct {
	skills   []*Skill
	byName   map[string]*Skill
	keys     map[string]string // skill name -> cache key
	shadowed []Shadow
	errs     []error
	warnings []Warning
	dirs     []string
	sum      uint64

	catalogOnce sync.Once
	catalog     string
}

// The interfaces the agent looks for.
var (
	_ agent.Toolset                                     = (*Toolset)(nil)
	_ interface{ Instructions(context.Context) string } = (*Toolset)(nil)
	_ interface{ Changed() <-chan struct{} }            = (*Toolset)(nil)
)

// Toolset serves skills to an agent. It is safe for concurrent use.
type Toolset struct {
	cfg   Config
	log   zerolog.Logger
	tools []agent.Tool

	reloadMu sync.Mutex // serialises reloads
	mu       sync.RWMutex
	snap     *snapshot
	cache    map[string]*cacheEntry

	changed chan struct{}
	watch   *watcher

	realOnce  sync.Once
	realPaths []string
}

// New discovers and loads the skills of cfg.Roots (metadata only) and
// returns the toolset. Refused skills do not fail New: they are handled by
// the failure policy and listed by Errors. With cfg.Watch, New starts the
// watcher; Close stops it.
//
// ctx serves the load only: New fails when it is already done, and refused
// skills are handed to the failure policy with it. It is not kept: the
// watcher runs until Close, and later loads use Reload's context.
func New(ctx context.Context, cfg Config) (*Toolset, error) {
	cfg.defaults()
	cfg.Roots = slices.Clone(cfg.Roots) // made absolute below: not the caller's
	for i, r := range cfg.Roots {
		switch {
		case r.Path == "" && r.FS == nil:
			return nil, failure.New(failure.Config, failure.SourceSkill, fmt.Sprintf("skills root %d has neither Path nor FS", i))
		case r.Path != "" && r.FS != nil:
			return nil, failure.New(failure.Config, failure.SourceSkill, fmt.Sprintf("skills root %d has both Path and FS", i))
		case r.Path != "":
			abs, err := filepath.Abs(r.Path)
			if err != nil {
				return nil, &failure.Error{Kind: failure.Config, Source: failure.SourceSkill, Message: "skills root path cannot be made absolute", Err: err}
			}
			cfg.Roots[i].Path = abs
		case r.FS != nil && r.Dir != "" && r.Dir != "." && !fs.ValidPath(r.Dir):
			return nil, failure.New(failure.Config, failure.SourceSkill, fmt.Sprintf("skills root %d: Dir %q is not a valid fs.FS path", i, r.Dir))
		}
	}
	t := &Toolset{cfg: cfg, log: zerolog.Nop(), changed: make(chan struct{}, 1)}
	if cfg.Logger != nil {
		t.log = *cfg.Logger
	}
	t.tools = t.buildTools()
	if _, err := t.Reload(ctx); err != nil {
		return nil, err
	}
	if cfg.Watch {
		w, err := t.startWatcher()
		if err != nil {
			return nil, &failure.Error{Kind: failure.Config, Source: failure.SourceSkill, Name: cfg.Name, Op: "watch",
				Message: "the skills watcher could not start", Err: err}
		}
		t.watch = w
	}
	return t, nil
}

// Reload rediscovers the skills, re-reading only the SKILL.md files whose
// modification time or size changed, and reports whether the set of skills
// changed (in which case Changed is signalled).
func (t *Toolset) Reload(ctx context.Context) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	t.reloadMu.Lock()
	defer t.reloadMu.Unlock()
	t.mu.RLock()
	old := t.cache
	prev := t.snap
	t.mu.RUnlock()

	l := newLoader(&t.cfg, old)
	l.run()
	s := &snapshot{byName: make(map[string]*Skill, len(l.found)), keys: make(map[string]string, len(l.found)), dirs: l.dirs}
	s.warnings = append(s.warnings, l.warns...)
	prevErrs, prevWarns := map[string]bool{}, map[Warning]bool{}
	if prev != nil {
		for _, e := range prev.errs {
			prevErrs[e.Error()] = true
		}
		for _, w := range prev.warnings {
			prevWarns[w] = true
		}
	}
	h := fnv64a(14695981039346656037)
	var num [16]byte
	for _, f := range l.found {
		e := f.entry
		h.writeString(f.key)
		binary.LittleEndian.PutUint64(num[:8], uint64(e.modTime.UnixNano()))
		binary.LittleEndian.PutUint64(num[8:], uint64(e.size))
		h.write(num[:])
		if e.err != nil {
			s.errs = append(s.errs, e.err)
			if !prevErrs[e.err.Error()] {
				t.pol().Handle(ctx, e.err)
			}
			continue
		}
		sk := e.skill
		if first, dup := s.byName[sk.Name]; dup {
			s.shadowed = append(s.shadowed, Shadow{Name: sk.Name, File: sk.File, By: first.File})
			s.warnings = append(s.warnings, newWarning(sk.File, 0, warnShadowed, "skill %q is shadowed by %s, which takes precedence", sk.Name, first.File))
			continue
		}
		s.byName[sk.Name] = sk
		s.keys[sk.Name] = f.key
		s.skills = append(s.skills, sk)
		s.warnings = append(s.warnings, sk.Warnings...)
	}
	slices.SortStableFunc(s.skills, func(a, b *Skill) int {
		if a.rootIdx != b.rootIdx {
			return a.rootIdx - b.rootIdx
		}
		return strings.Compare(a.Name, b.Name)
	})
	s.sum = uint64(h)
	changed := prev == nil || prev.sum != s.sum
	if changed {
		for _, w := range s.warnings {
			if !prevWarns[w] {
				t.log.Warn().Str("toolset", t.cfg.Name).Str("code", string(w.Code)).Str("file", w.File).Int("line", w.Line).Msg(w.Message)
			}
		}
	}
	t.mu.Lock()
	t.cache, t.snap = l.cache, s
	t.mu.Unlock()
	if changed && prev != nil {
		select {
		case t.changed <- struct{}{}:
		default:
		}
	}
	return changed && prev != nil, nil
}

func (t *Toolset) current() *snapshot {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.snap
}

// Name returns the toolset's name.
func (t *Toolset) Name() string { return t.cfg.Name }

// Tools returns activate_skill and read_skill_file, and run_skill_script
// when Config.Scripts is set.
func (t *Toolset) Tools(context.Context) ([]agent.Tool, error) { return t.tools, nil }

// Changed is signalled after a reload changed the skills.
func (t *Toolset) Changed() <-chan struct{} { return t.changed }

// Instructions returns the catalog of available skills for the system
// prompt, within Config.CatalogBudget characters:
//
//	<available_skills>
//	<skill><name>pdf</name><description>Fill PDF forms…</description></skill>
//	</available_skills>
//
// Every name and description is escaped (XML entities; control and
// invisible formatting characters removed; line breaks folded to spaces),
// so no skill can inject markup. When the full catalog does not fit,
// descriptions are shortened fairly: each to the same length (the longest
// that fits; shorter descriptions stay whole), cut at a word boundary and
// ended with "…". Only when that length would be under 20 characters are
// descriptions dropped (and the header then says to match skills by name),
// then the skills that still do not fit are omitted (last first) and a
// note says how many. Skills are in catalog order (see Skills).
func (t *Toolset) Instructions(context.Context) string {
	s := t.current()
	s.catalogOnce.Do(func() {
		s.catalog = renderCatalog(s.skills, catalogOptions{Budget: t.cfg.CatalogBudget, ActivateTool: t.cfg.ToolPrefix + ToolActivate})
	})
	return s.catalog
}

// Skills returns the loaded skills, in catalog order (root precedence, then
// name). The skills are shared: treat them as read-only.
func (t *Toolset) Skills() []*Skill {
	return append([]*Skill(nil), t.current().skills...)
}

// Skill returns the skill of the given name.
func (t *Toolset) Skill(name string) (*Skill, bool) {
	s, ok := t.current().byName[name]
	return s, ok
}

// Shadowed returns the skills hidden by higher-precedence ones.
func (t *Toolset) Shadowed() []Shadow { return append([]Shadow(nil), t.current().shadowed...) }

// Errors returns the refusals of the last load: *failure.Error values
// naming the file and what is wrong.
func (t *Toolset) Errors() []error { return append([]error(nil), t.current().errs...) }

// Warnings returns the warnings of the last load: every loaded skill's,
// shadowing and discovery problems. Body warnings (links) come with
// activation and Check.
func (t *Toolset) Warnings() []Warning { return append([]Warning(nil), t.current().warnings...) }

// Close stops the watcher, if any. The toolset stays usable without it.
func (t *Toolset) Close() error {
	if t.watch != nil {
		return t.watch.stop()
	}
	return nil
}

// Body returns the skill's body, read (and cached until SKILL.md changes)
// on first use.
func (t *Toolset) Body(ctx context.Context, name string) (*Skill, *Body, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	snap := t.current()
	s, ok := snap.byName[name]
	if !ok {
		return nil, nil, &failure.Error{Kind: failure.InvalidArgs, Source: failure.SourceSkill, Name: name,
			Message: fmt.Sprintf("there is no skill named %q; use a name from <available_skills>", name)}
	}
	d, err := t.openSkill(s)
	if err != nil {
		return s, nil, &failure.Error{Kind: failure.ToolError, Source: failure.SourceSkill, Name: name, Message: "the skill's folder cannot be opened", Err: err}
	}
	defer d.close()
	key := snap.keys[name]
	f, st, err := d.openMain()
	if err != nil {
		return s, nil, &failure.Error{Kind: failure.ToolError, Source: failure.SourceSkill, Name: name, Message: "the skill's SKILL.md cannot be read", Err: err}
	}
	defer f.Close()
	t.mu.RLock()
	e := t.cache[key]
	var b *Body
	if e != nil && e.body != nil && e.modTime.Equal(st.ModTime()) && e.size == st.Size() {
		b = e.body
	}
	t.mu.RUnlock()
	if b != nil {
		return s, b, nil
	}
	data, err := readAllCapped(f, st.Size(), t.cfg.MaxSkillBytes)
	if err != nil {
		if err == errOverCap {
			err = loadError(s.File, 0, errTooLarge, fmt.Sprintf("over the cap of %d bytes (Config.MaxSkillBytes)", t.cfg.MaxSkillBytes))
		} else {
			err = loadError(s.File, 0, err, "")
		}
		t.pol().Handle(ctx, err)
		return s, nil, err
	}
	b, err = parseBody(data, d.fsys, s.File)
	if err != nil {
		t.pol().Handle(ctx, err)
		return s, nil, err
	}
	for _, w := range b.Warnings {
		t.log.Warn().Str("toolset", t.cfg.Name).Str("code", string(w.Code)).Str("file", w.File).Int("line", w.Line).Msg(w.Message)
	}
	if e != nil && e.modTime.Equal(st.ModTime()) && e.size == st.Size() {
		t.mu.Lock()
		e.body = b
		t.mu.Unlock()
	}
	return s, b, nil
}

// Check loads the body of every skill and returns all warnings (metadata,
// discovery, shadowing and body links) and errors: a linter for skill
// folders.
func (t *Toolset) Check(ctx context.Context) ([]Warning, []error) {
	snap := t.current()
	warns := append([]Warning(nil), snap.warnings...)
	errs := append([]error(nil), snap.errs...)
	for _, s := range snap.skills {
		_, b, err := t.Body(ctx, s.Name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		warns = append(warns, b.Warnings...)
	}
	return warns, errs
}

// fnv64a is an FNV-1a hash of the loaded files, written without converting
// each name to a byte slice.
type fnv64a uint64

const fnvPrime = 1099511628211

func (h *fnv64a) writeString(s string) {
	for i := 0; i < len(s); i++ {
		*h = (*h ^ fnv64a(s[i])) * fnvPrime
	}
}

func (h *fnv64a) write(b []byte) {
	for _, c := range b {
		*h = (*h ^ fnv64a(c)) * fnvPrime
	}
}

// pol is the toolset's failure policy: Config.Policy, else the process
// default.
func (t *Toolset) pol() failure.Policy { return failure.Or(t.cfg.Policy) }
