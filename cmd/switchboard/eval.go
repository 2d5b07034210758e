package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/eval"
	"github.com/switchboard-dev/switchboard/agent/eval/safety"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/anthropic"
	"github.com/switchboard-dev/switchboard/llm/provider/gemini"
	"github.com/switchboard-dev/switchboard/llm/provider/ollama"
	"github.com/switchboard-dev/switchboard/llm/provider/openai"
	"github.com/switchboard-dev/switchboard/skills"
)

const evalUsage = `usage: switchboard eval run [flags]
       switchboard eval compare before.json after.json

run runs an eval set (-set: a JSON, YAML or ADK evalset file, or "safety"
for the built-in prompt-injection set) and prints a table; compare says
which cases got better or worse between two reports and fails when one got
worse. docs/evals.md explains both.
`

// runEval dispatches 'switchboard eval ...'.
func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, evalUsage)
		return errUsage
	}
	switch args[0] {
	case "run":
		return evalRun(ctx, args[1:], stdout, stderr)
	case "compare":
		if len(args) != 3 {
			fmt.Fprint(stderr, evalUsage)
			return errUsage
		}
		return evalCompare(args[1], args[2], stdout)
	}
	fmt.Fprint(stderr, evalUsage)
	return errUsage
}

func evalRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("switchboard eval run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	setFlag := fs.String("set", "safety", `the eval set: a file, or "safety"`)
	modelFlag := fs.String("model", "env", "env (the provider configured by environment, as cmd/demo), scripted, or replay (-cassettes)")
	cassettes := fs.String("cassettes", "", "the cassettes' directory (replay; record with -record)")
	record := fs.Bool("record", false, "record each case's cassette into -cassettes")
	instructions := fs.String("instructions", "", "the agent's system prompt (a set file's agent)")
	skillsDir := fs.String("skills", "", "a skills folder the agent gets (a set file's agent)")
	parallel := fs.Int("parallel", 4, "cases run at once")
	repeat := fs.Int("repeat", 0, "trials per case (pass@k; 0: the set's)")
	judge := fs.Bool("judge", false, "score rubrics with the same model as an LLM judge")
	out := fs.String("json", "", "write the JSON report to this file")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	var set *eval.Set
	var build func(context.Context, *eval.Case, llm.Model) (agent.Runner, error)
	if *setFlag == "safety" {
		set, build = safety.Set(), safety.Agent(nil)
	} else {
		s, err := eval.Load(*setFlag)
		if err != nil {
			return err
		}
		set = s
		build = func(ctx context.Context, _ *eval.Case, m llm.Model) (agent.Runner, error) {
			cfg := agent.Config{Name: set.Name, Model: m, Instructions: *instructions}
			if *skillsDir != "" {
				ts, err := skills.New(ctx, skills.Config{Roots: []skills.Root{{Path: *skillsDir}}})
				if err != nil {
					return nil, err
				}
				cfg.Toolsets = append(cfg.Toolsets, ts)
			}
			return agent.New(ctx, cfg)
		}
	}
	cfg := eval.Config{Agent: build, Cassettes: *cassettes, Parallel: *parallel, Repeat: *repeat}
	switch *modelFlag {
	case "env":
		m, err := provider.FromEnv(openai.Provider(), anthropic.Provider(), gemini.Provider(), ollama.Provider())
		if err != nil {
			return err
		}
		cfg.Model = m
	case "scripted":
		cfg.Model = llm.NewCyclic(llm.Say("(scripted) I cannot do that; I am not a real model."))
	case "replay":
		cfg.Mode = eval.Replay
	default:
		return fmt.Errorf("-model %q: want env, scripted or replay", *modelFlag)
	}
	if *record {
		cfg.Mode = eval.Record
	}
	if *judge && cfg.Model != nil {
		cfg.Judge = cfg.Model
	}
	rep, err := eval.Run(ctx, set, cfg)
	if err != nil {
		return err
	}
	if err := rep.WriteTable(stdout); err != nil {
		return err
	}
	if *out != "" {
		if err := rep.WriteJSON(*out); err != nil {
			return err
		}
	}
	if rep.Failed > 0 {
		return fmt.Errorf("%d of %d cases failed", rep.Failed, len(rep.Cases))
	}
	return nil
}

func evalCompare(a, b string, stdout io.Writer) error {
	before, err := eval.LoadReport(a)
	if err != nil {
		return err
	}
	after, err := eval.LoadReport(b)
	if err != nil {
		return err
	}
	cmp := eval.Compare(before, after)
	if err := cmp.WriteText(stdout); err != nil {
		return err
	}
	if len(cmp.Worse) > 0 {
		return errors.New("some cases got worse")
	}
	return nil
}
