package readme

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the documents' snippets from the code")

// root is the repository's root, from this package's folder.
const root = "../.."

var marker = regexp.MustCompile(`^<!-- snippet: (\S+) (\S+) -->$`)

// extract is the code between the named readme markers of a Go file, with
// its common indentation removed.
func extract(file, name string) (string, error) {
	data, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		return "", err
	}
	var lines []string
	in, found := false, false
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		t := strings.TrimSpace(sc.Text())
		switch {
		case t == "// readme:begin "+name:
			in, found = true, true
			continue
		case in && t == "// readme:end":
			in = false
			continue
		}
		if in {
			lines = append(lines, sc.Text())
		}
	}
	if !found {
		return "", fmt.Errorf("%s has no // readme:begin %s", file, name)
	}
	if in {
		return "", fmt.Errorf("%s: // readme:begin %s has no // readme:end", file, name)
	}
	return strings.Join(dedent(trimBlank(lines)), "\n"), nil
}

func trimBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func dedent(lines []string) []string {
	prefix := ""
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		ws := l[:len(l)-len(strings.TrimLeft(l, "\t"))]
		if i == 0 || len(ws) < len(prefix) {
			prefix = ws
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimPrefix(l, prefix)
	}
	return out
}

// syncSnippets checks the snippets of one document: it returns the
// document with every snippet rewritten from its code, and the snippets
// that differed.
func syncSnippets(doc string) (string, []string, error) {
	lines := strings.Split(doc, "\n")
	var out, stale []string
	for i := 0; i < len(lines); i++ {
		out = append(out, lines[i])
		m := marker.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		if i+1 >= len(lines) || lines[i+1] != "```go" {
			return "", nil, fmt.Errorf("line %d: a snippet marker must be followed by a ```go block", i+1)
		}
		end := i + 2
		for end < len(lines) && lines[end] != "```" {
			end++
		}
		if end == len(lines) {
			return "", nil, fmt.Errorf("line %d: the ```go block is not closed", i+2)
		}
		want, err := extract(m[1], m[2])
		if err != nil {
			return "", nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		if got := strings.Join(lines[i+2:end], "\n"); got != want {
			stale = append(stale, m[1]+" "+m[2])
		}
		out = append(out, "```go", want, "```")
		i = end
	}
	return strings.Join(out, "\n"), stale, nil
}

// TestSnippets: every marked snippet of README.md and docs/*.md is the code
// it names, character for character.
func TestSnippets(t *testing.T) {
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	docs = append([]string{filepath.Join(root, "README.md")}, docs...)
	snippets := 0
	for _, path := range docs {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		snippets += strings.Count(string(data), "<!-- snippet: ")
		fixed, stale, err := syncSnippets(string(data))
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if len(stale) == 0 {
			continue
		}
		if *update {
			if err := os.WriteFile(path, []byte(fixed), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s: snippets differ from their code: %v (go test ./internal/readme -update rewrites them)", path, stale)
	}
	if snippets < 2 {
		t.Errorf("found %d snippets in README.md and docs/, want at least README's 2", snippets)
	}
}

// TestSyncFindsDrift: a snippet that differs from its code is reported, and
// -update's rewrite makes it equal.
func TestSyncFindsDrift(t *testing.T) {
	doc := "intro\n<!-- snippet: examples/embedding/main.go embedding -->\n```go\nold code\n```\ntail"
	fixed, stale, err := syncSnippets(doc)
	if err != nil || len(stale) != 1 {
		t.Fatalf("stale %v, err %v; want one stale snippet", stale, err)
	}
	if _, stale, _ := syncSnippets(fixed); len(stale) != 0 {
		t.Fatalf("after the rewrite, still stale: %v", stale)
	}
	if _, _, err := syncSnippets("<!-- snippet: nope.go x -->\n```go\n```"); err == nil {
		t.Fatal("a snippet of a missing file was accepted")
	}
}
