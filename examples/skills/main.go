// Command skills is a runnable example of the skills package: it loads the
// skills of this folder (compiled in with embed, or from -dir), lints them
// in strict mode, prints the catalog the model sees, and runs an agent over
// an offline scripted model that activates a skill and reads one of its
// bundled files.
//
//	go run ./examples/skills
//	go run ./examples/skills -dir examples/skills/skills -scripts
package main

import (
	"context"
	"embed"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/skills"
)

//go:embed skills
var bundled embed.FS

func main() {
	dir := flag.String("dir", "", "load skills from this directory instead of the embedded copy")
	scripts := flag.Bool("scripts", false, "also run the csv-report script (needs -dir; asks on the terminal)")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *dir, *scripts); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// run does the example's work, writing what happens to w.
func run(ctx context.Context, w io.Writer, dir string, scripts bool) error {
	root := skills.Root{FS: bundled, Dir: "skills", Label: "example"}
	if dir != "" {
		root = skills.Root{Path: dir, Label: "dir"}
	}
	ts, err := skills.New(ctx, skills.Config{Roots: []skills.Root{root}, Strict: true, Scripts: scripts && dir != ""})
	if err != nil {
		return err
	}
	defer ts.Close()

	warns, errs := ts.Check(ctx)
	fmt.Fprintf(w, "loaded %d skills, %d warnings, %d errors\n", len(ts.Skills()), len(warns), len(errs))
	for _, wn := range warns {
		fmt.Fprintln(w, "warning:", wn)
	}
	for _, e := range errs {
		fmt.Fprintln(w, "error:", e)
	}
	fmt.Fprintf(w, "\n%s\n\n", ts.Instructions(ctx))

	steps := script()
	cfg := agent.Config{Toolsets: []agent.Toolset{ts}}
	if scripts && dir != "" {
		steps = append(steps, llm.Calls(llm.CallTool("c3", skills.ToolRunScript,
			map[string]any{"skill": "csv-report", "path": "scripts/summarize.sh", "args": []string{"assets/example.csv"}})))
		// Executes tools are denied by default; allow this one, and let the
		// tool ask on the terminal before each run.
		cfg.Permissions = &agent.Permissions{Rules: []agent.Rule{{Tool: skills.ToolRunScript, Permission: agent.Allow}}}
		cfg.Elicitor = agent.ElicitorFunc(askTerminal)
	}
	steps = append(steps, llm.SummarizeResults("Done:"))
	cfg.Model = llm.NewScripted(steps...)
	a, err := agent.New(ctx, cfg)
	if err != nil {
		return err
	}
	for ev, err := range a.Stream(ctx, task) {
		if err != nil {
			return err
		}
		switch ev.Type {
		case agent.EventToolStarted:
			fmt.Fprintf(w, "-> %s %s\n", ev.Call.Tool, ev.Call.Args)
		case agent.EventToolFinished:
			text := ev.Result.Text()
			if len(text) > 160 {
				text = text[:160] + "…"
			}
			fmt.Fprintf(w, "<- %s: %s\n", ev.Call.Tool, text)
		case agent.EventFinal:
			fmt.Fprintf(w, "\n%s\n", ev.Text)
		}
	}
	return nil
}

// task is what the example asks of its agent.
const task = "Write a commit message for the staged changes."

// script is the scripted model's turns: activate the commit-message skill
// and read its reference (then, with scripts, run one; then answer).
func script() []llm.Step {
	return []llm.Step{
		llm.Calls(llm.CallTool("c1", skills.ToolActivate, map[string]any{"name": "commit-message"})),
		llm.Calls(llm.CallTool("c2", skills.ToolReadFile, map[string]any{"skill": "commit-message", "path": "references/conventional-commits.md"})),
	}
}

// askTerminal asks the permission question on the terminal.
func askTerminal(_ context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
	fmt.Fprintf(os.Stderr, "%s [y/N] ", e.Message)
	var answer string
	fmt.Fscanln(os.Stdin, &answer)
	if answer == "y" || answer == "Y" {
		return agent.ElicitationResult{Action: agent.ElicitAccept}, nil
	}
	return agent.ElicitationResult{Action: agent.ElicitDecline, Reason: "declined on the terminal"}, nil
}
