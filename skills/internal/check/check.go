package check

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/agent/guard"
	"github.com/switchboard-dev/switchboard/skills"
	"github.com/switchboard-dev/switchboard/skills/internal/catalog"
	"github.com/switchboard-dev/switchboard/skills/internal/grant"
)

// Options configures a check. Zero values mean the defaults shown.
type Options struct {
	// Strict reports every deviation from the Agent Skills specification
	// as an error (a strict agent refuses the skill), and makes warnings
	// fail the check (Report.Failed).
	Strict bool
	// CatalogBudget is the catalog budget of the agent the skills are
	// meant for (default 12,000 characters, as skills.Config); a catalog
	// that does not fit in full is a catalog-cut hint.
	CatalogBudget int
	// MaxBodyLines and MaxBodyTokens are the body size over which a skill
	// gets a body-long warning (defaults 500 lines and 5,000 tokens, the
	// specification's recommendation). Tokens are estimated as characters
	// / 4, rounded up.
	MaxBodyLines  int
	MaxBodyTokens int
	// MaxDepth bounds how deep under each directory skill folders are
	// searched (default 6, as skills.Config.MaxDepth).
	MaxDepth int
	// Logger receives the loader's logs (nil: none).
	Logger *zerolog.Logger
}

const (
	defaultBudget    = 12_000
	defaultMaxLines  = 500
	defaultMaxTokens = 5_000
	// maxSkillBytes is the loader's default cap on a SKILL.md.
	maxSkillBytes = 1 << 20
)

func (o *Options) defaults() {
	if o.CatalogBudget <= 0 {
		o.CatalogBudget = defaultBudget
	}
	if o.MaxBodyLines <= 0 {
		o.MaxBodyLines = defaultMaxLines
	}
	if o.MaxBodyTokens <= 0 {
		o.MaxBodyTokens = defaultMaxTokens
	}
}

// errNotDir: a path given to check is not a directory.
var errNotDir = errors.New("not a directory")

// checkDir checks the skills under dir: one skill folder, or a tree of them.
// See Dirs.
func checkDir(ctx context.Context, dir string, opts Options) (*Report, error) {
	return Dirs(ctx, []string{dir}, opts)
}

// Dirs checks the skills under dirs, searched in precedence order as the
// roots of one toolset (a skill shadowed by one of an earlier directory is
// reported). Problems of the skills are findings of the report; Dirs
// returns an error only when a directory cannot be checked at all (it does
// not exist, or is not a directory) or ctx ends.
func Dirs(ctx context.Context, dirs []string, opts Options) (*Report, error) {
	opts.defaults()
	if len(dirs) == 0 {
		return nil, errors.New("check: no directory given")
	}
	c := &checker{opts: opts, r: &Report{Dirs: dirs, Strict: opts.Strict}}
	roots := make([]skills.Root, 0, len(dirs))
	for _, d := range dirs {
		st, err := os.Stat(d)
		if err != nil {
			return nil, fmt.Errorf("check: %w", err)
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("check: %s: %w", d, errNotDir)
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("check: %s: %w", d, err)
		}
		c.paths = append(c.paths, pathMap{abs: abs, given: d})
		roots = append(roots, skills.Root{Path: d, Label: d})
	}
	ts, err := skills.New(ctx, skills.Config{Roots: roots, Lint: true, Guards: guard.Named(), CatalogBudget: opts.CatalogBudget, MaxDepth: opts.MaxDepth, Logger: opts.Logger})
	if err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	c.r.ts = ts
	if err := c.run(ctx); err != nil {
		return nil, err
	}
	c.r.finish()
	return c.r, nil
}

// pathMap maps an absolute directory back to the path given.
type pathMap struct{ abs, given string }

// checker holds one check's state.
type checker struct {
	opts  Options
	r     *Report
	paths []pathMap
	// skipped holds, by root, what discovery did not search in a root
	// that holds no skill.
	skipped map[string]string
}

// display writes an absolute path as reached from the directory given.
func (c *checker) display(p string) string {
	for _, m := range c.paths {
		if p == m.abs {
			return m.given
		}
		if rest, ok := strings.CutPrefix(p, m.abs+string(filepath.Separator)); ok {
			return filepath.Join(m.given, rest)
		}
	}
	return p
}

func (c *checker) run(ctx context.Context) error {
	ts := c.r.ts
	loaded := ts.Skills()
	byFile := make(map[string]string, len(loaded))
	for _, s := range loaded {
		byFile[s.File] = s.Name
	}
	// Files that hold a skill, loaded or not, to tell empty directories.
	var files []string
	for _, w := range ts.Warnings() {
		if detail, ok := strings.CutPrefix(w.Message, nothingFound); ok && Code(w.Code) == codeDiscovery {
			if c.skipped == nil {
				c.skipped = map[string]string{}
			}
			c.skipped[w.File] = detail
			continue // said by the no-skills finding
		}
		c.warning(w, byFile[w.File])
	}
	for _, sh := range ts.Shadowed() {
		files = append(files, sh.File)
	}
	for _, err := range ts.Errors() {
		file := c.refusal(err, "", "")
		files = append(files, file)
	}
	for _, s := range loaded {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("check: %w", err)
		}
		files = append(files, s.File)
		c.skill(ctx, s)
	}
	c.empty(files)
	c.catalog(ctx, loaded)
	return nil
}

// displayText rewrites the absolute paths of the directories given in a
// loader message as the paths given.
func (c *checker) displayText(msg string) string {
	for _, m := range c.paths {
		msg = strings.ReplaceAll(msg, m.abs+string(filepath.Separator), m.given+string(filepath.Separator))
	}
	return msg
}

// warning records a loader warning.
func (c *checker) warning(w skills.Warning, skill string) {
	c.r.add(Finding{File: c.display(w.File), Line: w.Line, Code: Code(w.Code), Spec: w.Spec, Skill: skill, Message: c.displayText(w.Message)})
}

// refusal records a refused skill or body and returns the file concerned
// (absolute; file when the error does not say).
func (c *checker) refusal(err error, skill, file string) string {
	if r, ok := skills.RefusalOf(err); ok {
		msg := r.Reason.Error()
		if r.Detail != "" {
			msg += ": " + r.Detail
		}
		c.r.add(Finding{File: c.display(r.File), Line: r.Line, Code: codeOf(r), Skill: skill, Message: c.displayText(msg)})
		return r.File
	}
	if file == "" && len(c.paths) > 0 {
		file = c.paths[0].abs
	}
	c.r.add(Finding{File: c.display(file), Code: codeUnreadable, Skill: skill, Message: err.Error()})
	return file
}

// empty reports the directories under which no SKILL.md was found.
func (c *checker) empty(files []string) {
	seen := map[string]bool{}
	for _, m := range c.paths {
		if seen[m.abs] {
			continue
		}
		seen[m.abs] = true
		found := false
		for _, f := range files {
			if f == m.abs || strings.HasPrefix(f, m.abs+string(filepath.Separator)) {
				found = true
				break
			}
		}
		if !found {
			msg := "no SKILL.md found in this directory or its subfolders; a skill is a folder holding a SKILL.md"
			if detail := c.skipped[m.abs]; detail != "" {
				msg += "; " + detail
			}
			c.r.add(Finding{File: m.given, Code: codeNoSkills, Message: msg})
		}
	}
}

// catalog hints when the catalog does not fit its budget in full.
func (c *checker) catalog(ctx context.Context, loaded []*skills.Skill) {
	if len(loaded) == 0 {
		return
	}
	entries := make([]catalog.Entry, len(loaded))
	for i, s := range loaded {
		entries[i] = catalog.Entry{Name: s.Name, Description: s.Description}
	}
	full := catalog.Render(entries, catalog.Options{Budget: 1 << 30})
	got := c.r.ts.Instructions(ctx)
	if got == full {
		return
	}
	what := "descriptions are shortened"
	switch {
	case strings.Contains(got, "not listed, for lack of space"):
		what = "descriptions are dropped and some skills are not listed"
	case !strings.Contains(got, "<description>"):
		what = "descriptions are dropped"
	}
	c.r.add(Finding{File: c.paths[0].given, Code: codeCatalogCut,
		Message: fmt.Sprintf("the catalog of %d skills needs %s characters; within the budget of %s, %s (see skillcheck -catalog)",
			len(loaded), thousands(len(full)), thousands(c.opts.CatalogBudget), what)})
}

// skill checks one loaded skill: its body, description, allowed-tools and
// bundled files.
func (c *checker) skill(ctx context.Context, s *skills.Skill) {
	sum := Skill{Name: s.Name, File: c.display(s.File)}
	raw := readSkillFile(s.Dir)
	file := c.display(s.File)
	_, b, err := c.r.ts.Body(ctx, s.Name)
	if err != nil {
		c.refusal(err, s.Name, s.File)
	} else {
		for _, w := range b.Warnings {
			c.warning(w, s.Name)
		}
		sum.BodyLines, sum.BodyTokens = measure(b.Markdown)
		if sum.BodyLines > c.opts.MaxBodyLines || sum.BodyTokens > c.opts.MaxBodyTokens {
			c.r.add(Finding{File: file, Line: b.Line, Code: codeBodyLong, Skill: s.Name,
				Message: fmt.Sprintf("the body is %s lines and about %s tokens; the specification recommends under %s lines and %s tokens (move details to files under references/)",
					thousands(sum.BodyLines), thousands(sum.BodyTokens), thousands(c.opts.MaxBodyLines), thousands(c.opts.MaxBodyTokens))})
		}
	}
	if !describesWhen(s.Description) {
		c.r.add(Finding{File: file, Line: keyLine(raw, "description"), Code: codeDescriptionWhen, Skill: s.Name,
			Message: "the description does not say when to use the skill; the specification asks for what it does and when to use it (\"Use when …\")"})
	}
	_, skipped := grant.Patterns(s.AllowedTools, nil)
	for _, sk := range skipped {
		c.r.add(Finding{File: file, Line: keyLine(raw, "allowed-tools"), Code: codeAllowedToolSkipped, Skill: s.Name,
			Message: "allowed-tools entry " + sk})
	}
	text := raw
	if text == "" && b != nil {
		text = b.Markdown
	}
	sum.Files = c.files(s, b, text)
	c.r.Skills = append(c.r.Skills, sum)
}

// nothingFound starts the loader's warning for a root that holds no skill.
const nothingFound = "no SKILL.md found under this root: "

// readSkillFile reads a skill's SKILL.md (or skill.md) through an os.Root
// of its folder (never following a link out of it, never blocking on a
// named pipe, regular files only), with LF line endings; "" when it
// cannot be read.
func readSkillFile(dir string) string {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return ""
	}
	defer root.Close()
	f, err := openRegular(root, "SKILL.md")
	if errors.Is(err, fs.ErrNotExist) {
		f, err = openRegular(root, "skill.md")
	}
	if err != nil {
		return ""
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSkillBytes))
	if err != nil {
		return ""
	}
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}
