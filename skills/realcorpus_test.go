package skills

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/adrg/frontmatter"
)

// A generated corpus shaped like real skill repositories (Claude Code
// plugin marketplaces, skill collections, mirrors), for the loader's
// benchmark and the test of its arithmetic. Nothing of it is committed:
// it is written into a temporary folder when the benchmark runs.

// corpusStats counts what generateRealCorpus wrote.
type corpusStats struct {
	folders     int // skill folders written (not counting symbolic links)
	invalid     int // of which refused (no description, TOML, unclosed)
	linkFolders int // symbolic links to skill folders (loaded once, under the first path found)
	linkFiles   int // skill folders whose SKILL.md links to another's (loaded as their own skills)
	bytes       int64
}

// want is the number of skills the loader should load.
func (c corpusStats) want() int { return c.folders - c.invalid + c.linkFiles }

// frontmatters are the shapes of real frontmatters, by frequency.
var corpusFrontmatters = []struct {
	weight int
	text   string
}{
	{60, "---\nname: %[1]s\ndescription: Generated skill %[2]d. Use it when the user asks for task %[2]d; it explains the steps, the checks and the files to read.\nlicense: Apache-2.0\n---\n"},
	{12, "---\nname: %[1]s\ndescription: \"Generated skill %[2]d. Use when the user asks for task %[2]d.\"\nmetadata:\n  author: bench\n  version: \"1.%[2]d\"\nallowed-tools: mcp__files__read_file mcp__files__write_file\n---\n"},
	{12, "---\nname: %[1]s\ndescription: >\n  Generated skill %[2]d, with a folded description over\n  several lines. Use it when the user asks for task %[2]d.\n---\n"},
	{6, "---\nname: %[1]s\ndescription: |\n  Generated skill %[2]d.\n  Use it when the user asks for task %[2]d.\nallowed-tools:\n  - Read\n  - Grep\n---\n"},
	{5, "---\nname: %[1]s\ndescription: Generated skill %[2]d. Use when: the user asks for task %[2]d\n---\n"},
	{5, "---\r\nname: %[1]s\r\ndescription: 'Generated skill %[2]d, written on Windows: use it for task %[2]d.'\r\n---\r\n"},
}

// generateRealCorpus writes about n skills under root: plugin folders at
// depths 3 to 6 (plugins/<category>/<plugin>/skills/<skill>,
// external_plugins/<plugin>/skills/<skill>, <plugin>/skills/<skill>,
// mirror/<owner>/<repo>/skills/.curated/<skill>), most plugins with a
// .claude-plugin/plugin.json, bodies of 1 to 60 KB (most small),
// references/ and scripts/ folders, skill folders linked from other
// plugins, SKILL.md files linked to another plugin's, and about 1% invalid
// files.
func generateRealCorpus(tb testing.TB, root string, n int) corpusStats {
	tb.Helper()
	rng := rand.New(rand.NewPCG(17, 15))
	filler := bytes.Repeat([]byte("## Step\n\nDo the thing carefully, then check the result against references/guide.md.\n\n"), 740) // 62 KB
	total := 0
	for _, f := range corpusFrontmatters {
		total += f.weight
	}
	var st corpusStats
	var skillDirs []string
	write := func(p string, data []byte, mode os.FileMode) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, data, mode); err != nil {
			tb.Fatal(err)
		}
		st.bytes += int64(len(data))
	}
	pluginDir := func(i int) string {
		switch i % 4 {
		case 0:
			return filepath.Join(root, "plugins", fmt.Sprintf("cat-%02d", i%13), fmt.Sprintf("plugin-%04d", i))
		case 1:
			return filepath.Join(root, "external_plugins", fmt.Sprintf("plugin-%04d", i))
		case 2:
			return filepath.Join(root, fmt.Sprintf("plugin-%04d", i))
		}
		return filepath.Join(root, "mirror", fmt.Sprintf("owner-%02d", i%17), fmt.Sprintf("repo-%04d", i))
	}
	for p := 0; st.folders < n; p++ {
		pd := pluginDir(p)
		skills := filepath.Join(pd, "skills")
		if p%4 == 3 {
			skills = filepath.Join(skills, ".curated")
		} else if p%5 != 0 {
			write(filepath.Join(pd, ".claude-plugin", "plugin.json"), fmt.Appendf(nil, `{"name": "plugin-%04d", "version": "1.0.0", "description": "A generated plugin."}`, p), 0o644)
		}
		for k := 0; k < 1+rng.IntN(40) && st.folders < n; k++ {
			name := fmt.Sprintf("skill-%05d", st.folders)
			dir := filepath.Join(skills, name)
			idx := st.folders
			st.folders++
			var fm string
			switch {
			case idx%97 == 13:
				fm, st.invalid = "---\nname: "+name+"\n---\n", st.invalid+1 // no description
			case idx%211 == 7:
				fm, st.invalid = "+++\nname = \""+name+"\"\n+++\n", st.invalid+1 // TOML
			case idx%307 == 11:
				fm, st.invalid = "---\nname: "+name+"\ndescription: never closed\n", st.invalid+1
			default:
				w := rng.IntN(total)
				for _, f := range corpusFrontmatters {
					if w -= f.weight; w < 0 {
						fm = fmt.Sprintf(f.text, name, idx)
						break
					}
				}
			}
			// Bodies of 1 to 60 KB, most of them small (as in real
			// repositories).
			u := rng.Float64()
			size := int(1024 * (1 + 59*u*u*u))
			write(filepath.Join(dir, "SKILL.md"), append([]byte(fm), filler[:size]...), 0o644)
			if rng.IntN(3) > 0 {
				write(filepath.Join(dir, "references", "guide.md"), filler[:512+rng.IntN(3000)], 0o644)
			}
			if rng.IntN(3) == 0 {
				write(filepath.Join(dir, "scripts", "run.sh"), []byte("#!/bin/sh\necho ok\n"), 0o755)
			}
			skillDirs = append(skillDirs, dir)
		}
		// Skills shared between plugins: a linked folder, and a folder
		// whose SKILL.md links to another plugin's.
		if p%7 == 6 && len(skillDirs) > 50 {
			target := skillDirs[rng.IntN(len(skillDirs)-45)]
			if isInvalidDir(target) {
				continue
			}
			rel, _ := filepath.Rel(skills, target)
			if err := os.Symlink(rel, filepath.Join(skills, "shared-folder")); err != nil {
				tb.Skip("symbolic links unavailable:", err)
			}
			st.linkFolders++
			own := filepath.Join(skills, "shared-file")
			if err := os.MkdirAll(own, 0o755); err != nil {
				tb.Fatal(err)
			}
			rel, _ = filepath.Rel(own, filepath.Join(target, "SKILL.md"))
			if err := os.Symlink(rel, filepath.Join(own, "SKILL.md")); err != nil {
				tb.Fatal(err)
			}
			st.linkFiles++
		}
	}
	return st
}

// isInvalidDir reports a generated skill folder whose SKILL.md is refused.
func isInvalidDir(dir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, "SKILL.md"))
	if err != nil {
		return true
	}
	head, _, _ := bytes.Cut(data, []byte("\n## Step"))
	return !bytes.Contains(head, []byte("description")) || bytes.HasPrefix(data, []byte("+++")) || bytes.Contains(head, []byte("never closed"))
}

// corpusWalk finds the SKILL.md files as the loader does (the same
// folders skipped, the same depth, skill.md after SKILL.md, a folder
// reached twice through links visited once) and calls fn on each, with
// no parsing: the floor's discovery.
//
// manifest, when set, is called on each plugin manifest
// (.claude-plugin/plugin.json), which the loader reads too.
func corpusWalk(root string, maxDepth int, fn, manifest func(file string) error) error {
	seen := map[string]bool{}
	var walk func(dir string, depth int) error
	walk = func(dir string, depth int) error {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		if manifest != nil {
			for _, e := range entries {
				if e.Name() == pluginDir {
					if err := manifest(filepath.Join(dir, pluginDir, "plugin.json")); err != nil && !errors.Is(err, fs.ErrNotExist) {
						return err
					}
					break
				}
			}
		}
		for _, e := range entries {
			if skip, _ := skipFolder(e.Name()); skip {
				continue
			}
			full := dir + string(filepath.Separator) + e.Name()
			if e.Type()&fs.ModeSymlink != 0 {
				st, err := os.Stat(full)
				if err != nil || !st.IsDir() {
					continue
				}
				real, err := filepath.EvalSymlinks(full)
				if err != nil || seen[real] {
					continue
				}
				seen[real] = true
			} else if !e.IsDir() {
				continue
			} else if seen[full] {
				continue
			} else {
				seen[full] = true
			}
			found := false
			for _, name := range []string{skillFile, skillFileLower} {
				file := full + string(filepath.Separator) + name
				if _, err := os.Lstat(file); err == nil {
					found = true
					if err := fn(file); err != nil {
						return err
					}
					break
				}
			}
			if !found && depth+1 < maxDepth {
				if err := walk(full, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(root, 0)
}

// floorRead reads file up to the end of its frontmatter (the bytes the
// loader reads) with the loader's raw open, and nothing else.
func floorRead(file string, buf []byte) (int, error) {
	f, _, err := openSkillFile(file)
	var r io.ReadCloser = f
	if err == errSymlink {
		r, err = os.Open(file)
	}
	if err != nil {
		return 0, err
	}
	defer r.Close()
	got := 0
	for {
		if got == len(buf) {
			return got, nil // as far as the loader reads before giving up
		}
		k, err := r.Read(buf[got:])
		got += k
		if bytes.Contains(buf[3:got], []byte("\n---")) || errors.Is(err, io.EOF) {
			return got, nil
		}
		if err != nil {
			return got, err
		}
	}
}

// floorLoad is the read floor: the same walk, each SKILL.md read up to its
// frontmatter's end and each plugin manifest read, no parsing. It returns
// the SKILL.md files read.
func floorLoad(root string) ([]string, error) {
	buf := make([]byte, 64<<10)
	var files []string
	err := corpusWalk(root, 6, func(file string) error {
		files = append(files, file)
		_, err := floorRead(file, buf)
		return err
	}, func(file string) error {
		f, err := os.Open(file)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.Read(buf)
		return err
	})
	return files, err
}

// adrgCorpusLoad is adrg/frontmatter used as-is on each whole file, over
// the same walk; it returns how many files it parsed and how many gave a
// description.
func adrgCorpusLoad(root string) (opened, n int, err error) {
	err = corpusWalk(root, 6, func(file string) error {
		opened++
		f, err := os.Open(file)
		if err != nil {
			return err
		}
		defer f.Close()
		var m map[string]any
		if _, err := frontmatter.Parse(f, &m); err == nil && m["description"] != nil {
			n++
		}
		return nil
	}, nil)
	return opened, n, err
}

// loadedFiles returns the SKILL.md files a toolset read: its skills' and
// its refusals'.
func loadedFiles(ts *Toolset) []string {
	var files []string
	for _, s := range ts.Skills() {
		files = append(files, s.File)
	}
	for _, sh := range ts.Shadowed() {
		files = append(files, sh.File)
	}
	for _, err := range ts.Errors() {
		if r, ok := RefusalOf(err); ok {
			files = append(files, r.File)
		}
	}
	return files
}

// realCorpusRoot generates a corpus of n skills in a fresh temporary
// folder, by its real path (as the loader reports its files).
func realCorpusRoot(tb testing.TB, n int) (string, corpusStats) {
	root, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	return root, generateRealCorpus(tb, root, n)
}

// TestRealCorpusArithmetic checks what the benchmark compares: the floor
// reads exactly the files the loader reads, adrg sees the same files, and
// the counts are those the generator wrote.
func TestRealCorpusArithmetic(t *testing.T) {
	root, st := realCorpusRoot(t, 1200)
	if st.invalid == 0 || st.linkFolders == 0 || st.linkFiles == 0 {
		t.Fatalf("the corpus lacks invalid or linked skills: %+v", st)
	}
	floor, err := floorLoad(root)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := New(t.Context(), Config{Roots: []Root{{Path: root}}})
	if err != nil {
		t.Fatal(err)
	}
	loaded := loadedFiles(ts)
	slices.Sort(floor)
	slices.Sort(loaded)
	if !slices.Equal(floor, loaded) {
		t.Errorf("the floor read %d files, the loader %d; they differ", len(floor), len(loaded))
	}
	if got := len(ts.Skills()) + len(ts.Shadowed()); got != st.want() {
		t.Errorf("the loader loaded %d skills (%d shadowed), want %d (%+v)", got, len(ts.Shadowed()), st.want(), st)
	}
	if got := len(ts.Errors()); got != st.invalid {
		t.Errorf("the loader refused %d files, want %d: %v", got, st.invalid, ts.Errors())
	}
	if len(floor) != st.folders+st.linkFiles {
		t.Errorf("the floor read %d files, want %d", len(floor), st.folders+st.linkFiles)
	}
	opened, n, err := adrgCorpusLoad(root)
	if err != nil {
		t.Fatal(err)
	}
	// adrg as-is parses the same files (it loses some: unquoted colons,
	// and CRLF files are read, but the point is the cost).
	if opened != len(floor) || n > st.want() || n < len(floor)*3/4 {
		t.Errorf("adrg parsed %d files and gave %d descriptions; the floor read %d, %d valid", opened, n, len(floor), st.want())
	}
	plugins := 0
	for _, s := range ts.Skills() {
		if strings.Contains(s.Name, ":") {
			plugins++
		}
	}
	if plugins == 0 || plugins == len(ts.Skills()) {
		t.Errorf("%d of %d skills are named plugin:skill", plugins, len(ts.Skills()))
	}
}

// BenchmarkLoadRealCorpus loads about 15,000 skills laid out as real
// repositories are (see generateRealCorpus) with the loader (New, default
// workers), the loader with one parsing goroutine (loader-1), the read
// floor (the same walk, each SKILL.md read up to its frontmatter's end,
// no parsing) and adrg/frontmatter as-is on each whole file over the same
// walk, in the same run and rotating order. The shared development
// machine is heavily loaded, so each side's wall time is taken as the
// median of its rounds, and its CPU time (user and system, of the whole
// process: the GC and the parse workers included) as the total; it
// reports both per load and the ratios loader/floor, loader-1/floor and
// loader/adrg for each.
func BenchmarkLoadRealCorpus(b *testing.B) {
	root, st := realCorpusRoot(b, 15_000)
	want := st.want()
	type side struct {
		name string
		load func() error
		wall []time.Duration
		cpu  time.Duration
	}
	loader := func(workers int) func() error {
		return func() error {
			ts, err := New(context.Background(), Config{Roots: []Root{{Path: root}}, loadWorkers: workers})
			if err != nil {
				return err
			}
			if got := len(ts.Skills()) + len(ts.Shadowed()); got != want {
				return fmt.Errorf("loaded %d skills, want %d", got, want)
			}
			return nil
		}
	}
	sides := []*side{
		{name: "loader", load: loader(0)},
		{name: "floor", load: func() error {
			files, err := floorLoad(root)
			if err == nil && len(files) != st.folders+st.linkFiles {
				err = fmt.Errorf("read %d files", len(files))
			}
			return err
		}},
		{name: "adrg", load: func() error {
			opened, _, err := adrgCorpusLoad(root)
			if err == nil && opened != st.folders+st.linkFiles {
				err = fmt.Errorf("parsed %d files", opened)
			}
			return err
		}},
		{name: "loader-1", load: loader(1)},
	}
	for _, s := range sides { // warm the page cache and check each side works
		if err := s.load(); err != nil {
			b.Fatalf("%s: %v", s.name, err)
		}
	}
	iters := 0
	for b.Loop() {
		for k := range sides {
			s := sides[(k+iters)%len(sides)]
			runtime.GC() // each side starts with the same heap
			cpu0 := processCPU()
			start := time.Now()
			if err := s.load(); err != nil {
				b.Fatalf("%s: %v", s.name, err)
			}
			s.wall = append(s.wall, time.Since(start))
			s.cpu += processCPU() - cpu0
		}
		iters++
	}
	median := func(s *side) float64 {
		w := slices.Clone(s.wall)
		slices.Sort(w)
		return float64(w[len(w)/2].Microseconds()) / 1000
	}
	cpu := func(s *side) float64 { return float64(s.cpu.Microseconds()) / 1000 / float64(iters) }
	for _, s := range sides {
		b.ReportMetric(median(s), s.name+"-ms/load")
		b.ReportMetric(cpu(s), s.name+"-cpu-ms/load")
	}
	b.ReportMetric(median(sides[0])/median(sides[1]), "loader/floor")
	b.ReportMetric(median(sides[3])/median(sides[1]), "loader-1/floor")
	b.ReportMetric(median(sides[0])/median(sides[2]), "loader/adrg")
	b.ReportMetric(cpu(sides[0])/cpu(sides[1]), "loader/floor-cpu")
	b.ReportMetric(cpu(sides[3])/cpu(sides[1]), "loader-1/floor-cpu")
	b.ReportMetric(cpu(sides[0])/cpu(sides[2]), "loader/adrg-cpu")
}
