package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/skills"
	"github.com/switchboard-dev/switchboard/skills/internal/check"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var update = flag.Bool("update", false, "rewrite the golden files")

var (
	corpus   = filepath.Join("..", "..", "testdata")
	examples = filepath.Join("..", "..", "..", "examples", "skills", "skills")
	docs     = filepath.Join("..", "..", "..", "docs", "skills.md")
)

// result is one run of the command.
type result struct {
	code           int
	stdout, stderr string
}

func runCmd(args ...string) result {
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return result{code, out.String(), errOut.String()}
}

// want is an expected finding: the file relative to the directory checked,
// the line, the lenient severity, the code, whether it deviates from the
// specification, and a piece of the message.
type want struct {
	file string
	line int
	sev  check.Severity
	code check.Code
	spec bool
	msg  string
}

const (
	E = check.SeverityError
	W = check.SeverityWarning
	H = check.SeverityHint
)

// strictSeverity is the severity of a finding in a strict check.
func (w want) strictSeverity() check.Severity {
	if w.spec || w.code == "unknown-field" {
		return E
	}
	return w.sev
}

var when = want{"SKILL.md", 3, H, "description-when", false, "does not say when to use the skill"}

// corpusCases: every quirk and malicious case of the corpus, with its
// findings (in lenient mode) and exit statuses (lenient, strict).
var corpusCases = []struct {
	dirs         []string
	exit, strict int
	want         []want
}{
	{[]string{"quirks/allowed-tools-list"}, 0, 1, []want{when,
		{"SKILL.md", 4, H, "allowed-tool-skipped", false, `allowed-tools entry Bash(git status:*): argument-scoped rules cannot be expressed`},
		{"SKILL.md", 4, W, "allowed-tools-list", true, "allowed-tools is a YAML list"}}},
	{[]string{"quirks/bad-yaml"}, 1, 1, []want{{"SKILL.md", 3, E, "bad-yaml", false, "frontmatter YAML cannot be read"}}},
	{[]string{"quirks/bom"}, 0, 1, []want{{"SKILL.md", 1, W, "bom", false, "byte order mark"}, when}},
	{[]string{"quirks/booleans"}, 0, 1, []want{when,
		{"SKILL.md", 4, W, "not-string", true, `license was read as a bool (false); it is used as the string "false"`},
		{"SKILL.md", 5, W, "metadata-type", true, "metadata values of internal, version are not strings"},
		{"SKILL.md", 8, H, "unknown-field", true, `the field "disable-model-invocation" is not in the specification`}}},
	{[]string{"quirks/clean"}, 0, 0, []want{when}},
	{[]string{"quirks/cr-only"}, 0, 1, []want{{"SKILL.md", 1, W, "cr", false, "CR-only line endings"}, when}},
	{[]string{"quirks/crlf"}, 0, 1, []want{{"SKILL.md", 1, W, "crlf", false, "CRLF line endings"}, when}},
	{[]string{"quirks/indented-delimiter"}, 0, 0, nil},
	{[]string{"quirks/json"}, 1, 1, []want{{"SKILL.md", 1, E, "not-yaml", false, "JSON frontmatter is not accepted"}}},
	{[]string{"quirks/links"}, 1, 1, []want{when,
		{"SKILL.md", 7, E, "link-case", false, `link "references/Guide.md" differs in case from the bundled "references/guide.md"`},
		{"SKILL.md", 7, E, "link-missing", false, `link "references/nope.md" names a file the skill does not bundle`},
		{"SKILL.md", 11, E, "link-outside", false, `link "../clean/SKILL.md" leaves the skill folder`}}},
	{[]string{"quirks/long-body"}, 0, 1, []want{{"SKILL.md", 5, W, "body-long", false, "the body is 522 lines and about 5,567 tokens; the specification recommends under 500 lines and 5,000 tokens"}}},
	{[]string{"quirks/long-description"}, 0, 1, []want{{"SKILL.md", 3, W, "description-long", true, "description is 1379 characters; the specification allows 1024"}, when}},
	{[]string{"quirks/markup"}, 0, 1, []want{when, {"SKILL.md", 3, W, "markup", false, "description holds markup or control characters"}}},
	{[]string{"quirks/name-mismatch"}, 0, 1, []want{{"SKILL.md", 2, W, "name-mismatch", true, `name "pdf-tools" differs from its folder "name-mismatch"`}, when}},
	{[]string{"quirks/nested-metadata"}, 0, 1, []want{when, {"SKILL.md", 4, W, "metadata-nested", true, "metadata nests maps under owner"}}},
	{[]string{"quirks/no-description"}, 1, 1, []want{{"SKILL.md", 2, E, "no-description", false, "no description: add a description"}}},
	{[]string{"quirks/no-frontmatter"}, 1, 1, []want{{"SKILL.md", 0, E, "no-frontmatter", false, "no YAML frontmatter"}}},
	{[]string{"quirks/non-utf8"}, 1, 1, []want{{"SKILL.md", 3, E, "not-utf8", false, "file is not valid UTF-8"}}},
	{[]string{"quirks/nul"}, 1, 1, []want{{"SKILL.md", 3, E, "binary", false, "file contains a NUL byte"}}},
	{[]string{"quirks/nul-body"}, 1, 1, []want{{"SKILL.md", 7, E, "binary", false, "file contains a NUL byte"}}},
	{[]string{"quirks/scripts-mode"}, 0, 1, []want{
		{"scripts/no-exec.sh", 0, W, "script-not-executable", false, "scripts/no-exec.sh is not executable; run_skill_script refuses it"},
		{"scripts/no-shebang.py", 1, W, "script-no-shebang", false, "scripts/no-shebang.py has no #! line"}}},
	{[]string{"quirks/toml"}, 1, 1, []want{{"SKILL.md", 1, E, "not-yaml", false, "TOML frontmatter is not accepted"}}},
	{[]string{"quirks/unclosed"}, 1, 1, []want{{"SKILL.md", 0, E, "unclosed", false, "frontmatter is not closed by a --- line at column 0"}}},
	{[]string{"quirks/unmentioned"}, 0, 1, []want{
		{"notes.txt", 0, W, "unmentioned-file", false, "notes.txt is bundled but SKILL.md never mentions it"},
		{"references/extra.md", 0, W, "unmentioned-file", false, "references/extra.md is bundled but SKILL.md never mentions it"}}},
	{[]string{"quirks/unquoted-colon"}, 0, 1, []want{{"SKILL.md", 3, W, "unquoted-colon", true, `the value of "description" holds an unquoted ": "`}}},
	{[]string{"malicious/traversal"}, 1, 1, []want{
		{"SKILL.md", 7, E, "link-outside", false, `link "../secret/canary.txt" leaves the skill folder`},
		{"SKILL.md", 7, E, "link-outside", false, `link "references/../../secret/canary.txt" leaves the skill folder`},
		{"SKILL.md", 8, E, "link-outside", false, `link "%2e%2e/secret/canary.txt" leaves the skill folder`},
		{"SKILL.md", 10, E, "link-outside", false, `link "/etc/passwd" is an absolute path`},
		{"SKILL.md", 10, E, "link-outside", false, `link "..\\secret\\canary.txt" leaves the skill folder`},
		{"SKILL.md", 10, E, "link-outside", false, `link "../../../../etc/passwd" leaves the skill folder`}}},
	{[]string{"malicious/symlink-escape"}, 1, 1, []want{
		{".hidden-link", 0, E, "symlink-outside", false, ".hidden-link is a symbolic link that leaves the skill folder"},
		{"SKILL.md", 7, E, "link-missing", false, `link "data/canary.txt" names a file the skill does not bundle`},
		{"data", 0, E, "symlink-outside", false, "data is a symbolic link that leaves the skill folder"},
		{"passwd", 0, E, "symlink-outside", false, "passwd is a symbolic link that leaves the skill folder"},
		{"references/notes.md", 0, E, "symlink-outside", false, "references/notes.md is a symbolic link that leaves the skill folder"}}},
	{[]string{"malicious/skill-file-link"}, 1, 1, []want{{"SKILL.md", 0, E, "symlink-outside", false, "SKILL.md is a symbolic link to a file outside its folder"}}},
	{[]string{"malicious/catalog-injection"}, 0, 1, []want{
		{"SKILL.md", 2, W, "name-invalid", true, "holds characters other than lowercase letters, digits and hyphens"},
		{"SKILL.md", 2, W, "name-mismatch", true, `differs from its folder "catalog-injection"`},
		{"SKILL.md", 3, W, "markup", false, "description holds markup or control characters"}}},
	{[]string{"malicious/secret"}, 1, 1, []want{{".", 0, E, "no-skills", false, "no SKILL.md found in this directory or its subfolders"}}},
	{[]string{"roots/high", "roots/low"}, 0, 1, []want{
		{"dup/SKILL.md", 3, H, "description-when", false, "does not say when"},
		{"group/nested/SKILL.md", 3, H, "description-when", false, "does not say when"},
		{"../low/dup/SKILL.md", 0, W, "shadowed", false, `skill "dup" is shadowed by ` + filepath.Join(corpus, "roots", "high", "dup", "SKILL.md")},
		{"../low/only-low/SKILL.md", 3, H, "description-when", false, "does not say when"}}},
}

// textLine parses a finding printed in text.
var textLine = regexp.MustCompile(`^(.*?):(?:(\d+):)? (error|warning|hint): (.*) \[([a-z0-9-]+)(, spec)?\]$`)

// parseText reads the findings of a text run.
func parseText(t *testing.T, out string) []check.Finding {
	t.Helper()
	var fs []check.Finding
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		m := textLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("line not in the vet style: %q", line)
		}
		n, _ := strconv.Atoi(m[2])
		fs = append(fs, check.Finding{File: m[1], Line: n, Severity: check.Severity(m[3]), Message: m[4], Code: check.Code(m[5]), Spec: m[6] != ""})
	}
	return fs
}

// TestCorpus runs the command on each case of the corpus, leniently and
// strictly, in text and in JSON: each yields its findings (file, line,
// severity, code, message) and its exit status.
func TestCorpus(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the corpus holds symbolic links and file modes")
	}
	for _, tc := range corpusCases {
		var dirs []string
		for _, d := range tc.dirs {
			dirs = append(dirs, filepath.Join(corpus, filepath.FromSlash(d)))
		}
		for _, strict := range []bool{false, true} {
			for _, asJSON := range []bool{false, true} {
				name := fmt.Sprintf("%s/strict=%v/json=%v", strings.Join(tc.dirs, "+"), strict, asJSON)
				t.Run(name, func(t *testing.T) {
					var args []string
					if strict {
						args = append(args, "-strict")
					}
					if asJSON {
						args = append(args, "-json")
					}
					res := runCmd(append(args, dirs...)...)
					wantExit := tc.exit
					if strict {
						wantExit = tc.strict
					}
					if res.code != wantExit {
						t.Errorf("exit %d, want %d\n%s%s", res.code, wantExit, res.stdout, res.stderr)
					}
					var got []check.Finding
					if asJSON {
						var out struct {
							Findings []check.Finding `json:"findings"`
							Exit     int             `json:"exit"`
							Strict   bool            `json:"strict"`
						}
						if err := json.Unmarshal([]byte(res.stdout), &out); err != nil {
							t.Fatalf("JSON: %v\n%s", err, res.stdout)
						}
						if out.Exit != res.code || out.Strict != strict {
							t.Errorf("JSON exit %d strict %v; run %d", out.Exit, out.Strict, res.code)
						}
						got = out.Findings
					} else {
						got = parseText(t, res.stdout)
						if (len(got) > 0) != strings.Contains(res.stderr, "skillcheck: ") {
							t.Errorf("summary on stderr %q with %d findings", res.stderr, len(got))
						}
					}
					if len(got) != len(tc.want) {
						t.Fatalf("%d findings, want %d:\n%s", len(got), len(tc.want), res.stdout)
					}
					for i, w := range tc.want {
						f := got[i]
						rel, _ := filepath.Rel(dirs[0], f.File)
						sev := w.sev
						if strict {
							sev = w.strictSeverity()
						}
						if filepath.ToSlash(rel) != w.file || f.Line != w.line || f.Severity != sev || f.Code != w.code || f.Spec != w.spec || !strings.Contains(f.Message, w.msg) {
							t.Errorf("finding %d:\n got %s:%d %s %s spec=%v %q\nwant %s:%d %s %s spec=%v …%q…",
								i, rel, f.Line, f.Severity, f.Code, f.Spec, f.Message, w.file, w.line, sev, w.code, w.spec, w.msg)
						}
					}
				})
			}
		}
	}
}

// TestCodesDocumented: every code the corpus yields, and every code of the
// check package, is described in docs/skills.md.
func TestCodesDocumented(t *testing.T) {
	data, err := os.ReadFile(docs)
	if err != nil {
		t.Fatal(err)
	}
	codes := []check.Code{"unreadable", "too-large", "no-name", "symlink-broken", "catalog-cut"}
	for _, tc := range corpusCases {
		for _, w := range tc.want {
			codes = append(codes, w.code)
		}
	}
	slices.Sort(codes)
	for _, c := range slices.Compact(codes) {
		if !bytes.Contains(data, []byte("`"+string(c)+"`")) {
			t.Errorf("code %s is not documented in docs/skills.md", c)
		}
	}
}

// TestNeverReadsOutside: whatever the command is asked on the malicious
// cases, nothing of the files their links point to comes out.
func TestNeverReadsOutside(t *testing.T) {
	dir := filepath.Join(corpus, "malicious")
	for _, args := range [][]string{
		{dir}, {"-json", dir}, {"-strict", dir}, {"-catalog", dir}, {"-catalog", "-json", dir},
		{"-show", "symlink-escape", dir}, {"-show", "traversal", dir}, {"-show", "symlink-escape", "-json", dir},
	} {
		res := runCmd(args...)
		if strings.Contains(res.stdout+res.stderr, "SECRET-CANARY") {
			t.Errorf("%v: an outside file was read:\n%s%s", args, res.stdout, res.stderr)
		}
		if res.code != exitFailed {
			t.Errorf("%v: exit %d, want %d", args, res.code, exitFailed)
		}
	}
	res := runCmd("-show", "symlink-escape", dir)
	if !strings.Contains(res.stdout, "Bundled files: none") {
		t.Errorf("links leaving the folder are listed:\n%s", res.stdout)
	}
}

// TestExamplesStrict: the example skills pass a strict check with no
// finding at all.
func TestExamplesStrict(t *testing.T) {
	for _, args := range [][]string{{"-strict", examples}, {"-strict", "-json", examples}} {
		res := runCmd(args...)
		if res.code != exitOK || res.stderr != "" {
			t.Errorf("%v: exit %d\n%s%s", args, res.code, res.stdout, res.stderr)
		}
		if args[1] != "-json" && res.stdout != "" {
			t.Errorf("findings:\n%s", res.stdout)
		}
	}
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -update to accept):\n got:\n%s\nwant:\n%s", name, got, want)
	}
}

// TestCatalogGolden prints the catalog under three budgets (in full,
// descriptions shortened, names only) and checks that it is what the
// agent's system prompt gets.
func TestCatalogGolden(t *testing.T) {
	dir := filepath.Join("testdata", "catalog")
	for _, budget := range []int{12_000, 800, 500} {
		t.Run(strconv.Itoa(budget), func(t *testing.T) {
			res := runCmd("-catalog", "-budget", strconv.Itoa(budget), dir)
			if res.code != exitOK {
				t.Fatalf("exit %d: %s", res.code, res.stderr)
			}
			golden(t, fmt.Sprintf("catalog-%d.golden", budget), res.stdout)
			catalog := strings.TrimSuffix(res.stdout, "\n")
			if len(catalog) > budget {
				t.Errorf("catalog of %d characters over the budget %d", len(catalog), budget)
			}
			if system := systemPrompt(t, dir, budget); !strings.Contains(system, "\n\n"+catalog+"\n\n") {
				t.Errorf("the agent's system prompt does not hold the catalog:\n%s", system)
			}
		})
	}
}

// systemPrompt returns the system prompt an agent gives its model with the
// skills of dir.
func systemPrompt(t *testing.T, dir string, budget int) string {
	ctx := context.Background()
	ts, err := skills.New(ctx, skills.Config{Roots: []skills.Root{{Path: dir}}, CatalogBudget: budget})
	if err != nil {
		t.Fatal(err)
	}
	var system string
	model := llm.NewScripted(llm.React(func(req *llm.Request) llm.Step {
		system = req.System
		return llm.Say("ok")
	}))
	a, err := agent.New(ctx, agent.Config{Model: model, Instructions: "You are a test.", Toolsets: []agent.Toolset{ts}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(ctx, "hi"); err != nil {
		t.Fatal(err)
	}
	return system
}

// TestShow prints what activation returns, as the model receives it.
func TestShow(t *testing.T) {
	res := runCmd("-show", "commit-message", examples)
	if res.code != exitOK || res.stderr != "" {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	abs, _ := filepath.Abs(filepath.Join(examples, "commit-message"))
	golden(t, "show-commit-message.golden", strings.ReplaceAll(res.stdout, abs, "<BASE>"))
	js := runCmd("-show", "commit-message", "-json", examples)
	var out struct {
		Activation string `json:"activation"`
	}
	if err := json.Unmarshal([]byte(js.stdout), &out); err != nil || out.Activation != res.stdout {
		t.Errorf("JSON activation %q (%v), want the text output", out.Activation, err)
	}
}

// TestUsage: bad invocations exit with status 2 and say why.
func TestUsage(t *testing.T) {
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{nil, exitUsage, "usage: skillcheck"},
		{[]string{"-nope", examples}, exitUsage, "flag provided but not defined"},
		{[]string{"-budget", "0", examples}, exitUsage, "usage: skillcheck"},
		{[]string{filepath.Join(corpus, "missing")}, exitUsage, "no such file or directory"},
		{[]string{filepath.Join(corpus, "quirks", "clean", "SKILL.md")}, exitUsage, "not a directory"},
		{[]string{"-show", "nope", examples}, exitUsage, `no skill named "nope" loaded; loaded: commit-message, csv-report`},
		{[]string{"-h"}, exitOK, "usage: skillcheck"},
	}
	for _, tc := range tests {
		res := runCmd(tc.args...)
		if res.code != tc.code || !strings.Contains(res.stderr, tc.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, res.code, res.stderr, tc.code, tc.msg)
		}
	}
}

// TestBinary builds the command and runs it as a pre-commit hook would.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool:", err)
	}
	bin := filepath.Join(t.TempDir(), "skillcheck")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"-strict", examples}, exitOK},
		{[]string{filepath.Join(corpus, "malicious", "traversal")}, exitFailed},
		{nil, exitUsage},
	} {
		cmd := exec.Command(bin, tc.args...)
		out, _ := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != tc.code {
			t.Errorf("%v: exit %d, want %d\n%s", tc.args, code, tc.code, out)
		}
		if tc.code == exitFailed && !slices.ContainsFunc(strings.Split(string(out), "\n"), textLine.MatchString) {
			t.Errorf("%v: no finding printed:\n%s", tc.args, out)
		}
	}
}
