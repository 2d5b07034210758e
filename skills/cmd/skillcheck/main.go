// Command skillcheck checks skill folders (Agent Skills: a folder holding a
// SKILL.md, plus references, scripts and assets) before they are shared:
// that they load here and in stricter agents, how the model will see
// them, and that their bundled files are where the instructions say.
//
// Usage:
//
//	skillcheck [flags] DIR...
//
// Each DIR is a skill folder or a tree of them (searched as the agent
// does, in precedence order when there are several). Findings are printed
// one per line in the style of go vet:
//
//	skills/pdf/SKILL.md:3: warning: description is 1204 characters; the specification allows 1024 … [description-long, spec]
//
// The flags are:
//
//	-strict       report every deviation from the Agent Skills specification
//	              as an error, and fail on warnings too
//	-json         print the report as JSON (for CI)
//	-catalog      print the catalog exactly as the model receives it in the
//	              system prompt (findings go to standard error)
//	-budget N     the catalog budget in characters (default 12000)
//	-depth N      search skill folders up to N levels under each DIR
//	              (default 6, as the agent does)
//	-show NAME    print what activating skill NAME returns to the model:
//	              base directory, bundled files and instructions (findings
//	              go to standard error)
//
// The exit status is 0 when the check passes (hints never fail it), 1
// when it finds errors (or, with -strict, warnings), and 2 when it cannot
// run: bad flags, a DIR that is not a directory, -show of an unknown skill.
//
// Install it with
//
//	go install github.com/switchboard-dev/switchboard/skills/cmd/skillcheck@latest
//
// Every check code and message is described in docs/skills.md.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/switchboard-dev/switchboard/skills"
	"github.com/switchboard-dev/switchboard/skills/internal/check"
)

// Exit statuses.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// output is the JSON form of a run.
type output struct {
	*check.Report
	// Catalog is set with -catalog; Activation with -show.
	Catalog    string `json:"catalog,omitempty"`
	Activation string `json:"activation,omitempty"`
	// Exit is the exit status.
	Exit int `json:"exit"`
}

// run is the command: it parses args, checks, prints and returns the exit
// status.
func run(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("skillcheck", flag.ContinueOnError)
	fl.SetOutput(stderr)
	strict := fl.Bool("strict", false, "report every deviation from the Agent Skills specification as an error, and fail on warnings")
	asJSON := fl.Bool("json", false, "print the report as JSON")
	catalog := fl.Bool("catalog", false, "print the catalog exactly as the model receives it")
	budget := fl.Int("budget", 12_000, "catalog budget in characters")
	show := fl.String("show", "", "print what activating the named skill returns")
	depth := fl.Int("depth", 6, "search skill folders up to this many levels under each DIR")
	fl.Usage = func() {
		fmt.Fprintln(fl.Output(), "usage: skillcheck [-strict] [-json] [-catalog [-budget N]] [-depth N] [-show NAME] DIR...")
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fl.NArg() == 0 || *budget <= 0 || *depth <= 0 {
		fl.Usage()
		return exitUsage
	}
	ctx := context.Background()
	rep, err := check.Dirs(ctx, fl.Args(), check.Options{Strict: *strict, CatalogBudget: *budget, MaxDepth: *depth})
	if err != nil {
		fmt.Fprintln(stderr, "skillcheck:", err)
		return exitUsage
	}
	out := output{Report: rep, Exit: exitOK}
	if rep.Failed() {
		out.Exit = exitFailed
	}
	ts := rep.Toolset()
	if *catalog {
		out.Catalog = ts.Instructions(ctx)
	}
	if *show != "" {
		if _, ok := ts.Skill(*show); !ok {
			fmt.Fprintf(stderr, "skillcheck: no skill named %q loaded; loaded: %s\n", *show, names(ts))
			return exitUsage
		}
		text, err := activate(ctx, ts, *show)
		if err != nil {
			fmt.Fprintf(stderr, "skillcheck: %s: %v\n", skills.ToolActivate, err)
			out.Exit = exitFailed
		}
		out.Activation = text
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			fmt.Fprintln(stderr, "skillcheck:", err)
			return exitUsage
		}
		return out.Exit
	}
	findings := stdout
	if *catalog || *show != "" {
		findings = stderr
	}
	if *catalog {
		fmt.Fprintln(stdout, out.Catalog)
	}
	if out.Activation != "" {
		if *catalog {
			fmt.Fprintln(stdout)
		}
		fmt.Fprint(stdout, out.Activation)
		if !strings.HasSuffix(out.Activation, "\n") {
			fmt.Fprintln(stdout)
		}
	}
	for _, f := range rep.Findings {
		fmt.Fprintln(findings, f)
	}
	if len(rep.Findings) > 0 {
		fmt.Fprintf(stderr, "skillcheck: %s loaded; %s, %s, %s\n", count(len(rep.Skills), "skill"),
			count(rep.Errors, "error"), count(rep.Warnings, "warning"), count(rep.Hints, "hint"))
	}
	return out.Exit
}

// activate calls the activate_skill tool, the one the model calls, and
// returns its text.
func activate(ctx context.Context, ts *skills.Toolset, name string) (string, error) {
	tools, err := ts.Tools(ctx)
	if err != nil {
		return "", err
	}
	args, err := json.Marshal(map[string]string{"name": name})
	if err != nil {
		return "", err
	}
	for _, t := range tools {
		if t.Spec().Name == skills.ToolActivate {
			res, err := t.Call(ctx, args)
			if err != nil {
				return "", err
			}
			return res.Text(), nil
		}
	}
	return "", errors.New("the toolset has no " + skills.ToolActivate + " tool")
}

func names(ts *skills.Toolset) string {
	var out []string
	for _, s := range ts.Skills() {
		out = append(out, s.Name)
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
