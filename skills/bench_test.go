package skills

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/adrg/frontmatter"
	"gopkg.in/yaml.v2"
)

// generateSkills writes n skill folders under root: a realistic
// frontmatter and a few kilobytes of body each.
func generateSkills(tb testing.TB, root string, n int) {
	tb.Helper()
	body := strings.Repeat("## Step\n\nDo the thing carefully, then check the result against the reference.\n\n", 40)
	for i := range n {
		name := fmt.Sprintf("skill-%05d", i)
		fm := fmt.Sprintf("---\nname: %s\ndescription: Generated skill number %d. Use it when the user asks for task %d; it explains the steps, the checks and the files to read.\nlicense: Apache-2.0\ncompatibility: Requires Python 3.11 and network access.\nmetadata:\n  author: bench\n  version: \"1.%d\"\nallowed-tools: mcp__files__read_file mcp__files__write_file\n---\n", name, i, i, i%10)
		dir := filepath.Join(root, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(fm+body), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

var closing = []byte("\n---\n")

// baselineLoad is the floor the loader is measured against: list the root,
// read each SKILL.md only up to its closing delimiter, decode the YAML.
func baselineLoad(root string) (int, error) { return baseline(root, osOpen) }

// baselineRawLoad is the same floor with the loader's file-opening fast
// path, to show the loader's own overhead apart from its system calls.
func baselineRawLoad(root string) (int, error) {
	return baseline(root, func(name string) (io.ReadCloser, error) {
		f, _, err := openSkillFile(name)
		return f, err
	})
}

func osOpen(name string) (io.ReadCloser, error) { return os.Open(name) }

func baseline(root string, open func(string) (io.ReadCloser, error)) (int, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return 0, err
	}
	buf := make([]byte, 4096)
	n := 0
	for _, e := range entries {
		f, err := open(filepath.Join(root, e.Name(), "SKILL.md"))
		if err != nil {
			return n, err
		}
		got := 0
		end := -1
		for end < 0 {
			if got == len(buf) {
				buf = append(buf, make([]byte, len(buf))...)
			}
			k, err := f.Read(buf[got:])
			got += k
			end = bytes.Index(buf[3:got], closing)
			if err == io.EOF {
				break
			}
			if err != nil {
				f.Close()
				return n, err
			}
		}
		f.Close()
		if end < 0 {
			return n, fmt.Errorf("%s: no closing delimiter", e.Name())
		}
		var m map[string]any
		if err := yaml.Unmarshal(buf[4:3+end+1], &m); err != nil {
			return n, err
		}
		if m["description"] == nil {
			return n, fmt.Errorf("%s: no description", e.Name())
		}
		n++
	}
	return n, nil
}

// adrgLoad uses adrg/frontmatter as-is on each whole file.
func adrgLoad(root string) (int, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		f, err := os.Open(filepath.Join(root, e.Name(), "SKILL.md"))
		if err != nil {
			return n, err
		}
		var m map[string]any
		_, err = frontmatter.Parse(f, &m)
		f.Close()
		if err != nil {
			return n, err
		}
		if m["description"] == nil {
			return n, fmt.Errorf("%s: no description", e.Name())
		}
		n++
	}
	return n, nil
}

func loaderLoad(root string) (int, error) { return loaderLoadN(root, 0) }

// loaderLoad1 is the loader parsing in the calling goroutine only.
func loaderLoad1(root string) (int, error) { return loaderLoadN(root, 1) }

func loaderLoadN(root string, workers int) (int, error) {
	ts, err := New(context.Background(), Config{Roots: []Root{{Path: root}}, loadWorkers: workers})
	if err != nil {
		return 0, err
	}
	if errs := ts.Errors(); len(errs) > 0 {
		return 0, errs[0]
	}
	return len(ts.Skills()), ts.Close()
}

// BenchmarkLoadMetadata loads the metadata of 10,000 generated skills with
// the loader (New: discovery, parsing, validation, catalog order), the
// baseline and adrg/frontmatter as-is, in the same run and in rotating
// order, and reports each one's time per load and the ratios. A fourth
// side, baseline-raw, is the baseline with the loader's raw-open fast path,
// and a fifth, loader-1, the loader with one parsing goroutine (the
// default uses GOMAXPROCS, at most 4): loader-1/baseline-raw is the
// loader's own overhead.
func BenchmarkLoadMetadata(b *testing.B) {
	const n = 10_000
	root := b.TempDir()
	generateSkills(b, root, n)
	type side struct {
		name string
		load func(string) (int, error)
		t    time.Duration
	}
	sides := []*side{{name: "loader", load: loaderLoad}, {name: "baseline", load: baselineLoad}, {name: "adrg", load: adrgLoad},
		{name: "baseline-raw", load: baselineRawLoad}, {name: "loader-1", load: loaderLoad1}}
	for _, s := range sides { // warm the page cache and check each side works
		if got, err := s.load(root); err != nil || got != n {
			b.Fatalf("%s loaded %d skills: %v", s.name, got, err)
		}
	}
	iters := 0
	for b.Loop() {
		for k := range sides {
			s := sides[(k+iters)%len(sides)]
			start := time.Now()
			if got, err := s.load(root); err != nil || got != n {
				b.Fatalf("%s loaded %d skills: %v", s.name, got, err)
			}
			s.t += time.Since(start)
		}
		iters++
	}
	ms := func(s *side) float64 { return float64(s.t.Microseconds()) / 1000 / float64(iters) }
	for _, s := range sides {
		b.ReportMetric(ms(s), s.name+"-ms/load")
	}
	b.ReportMetric(ms(sides[0])/ms(sides[1]), "loader/baseline")
	b.ReportMetric(ms(sides[0])/ms(sides[2]), "loader/adrg")
	b.ReportMetric(ms(sides[0])/ms(sides[3]), "loader/baseline-raw")
	b.ReportMetric(ms(sides[4])/ms(sides[1]), "loader-1/baseline")
	b.ReportMetric(ms(sides[4])/ms(sides[2]), "loader-1/adrg")
}
