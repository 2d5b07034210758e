package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/worker"
	"github.com/switchboard-dev/switchboard/llm"
)

// readyLine is what a worker process prints once it serves.
const readyLine = "worker ready"

// RunWorker serves the performance specialist on the bus at url until ctx
// ends; it prints readyLine to out once it serves.
func RunWorker(ctx context.Context, url, token string, out *os.File) error {
	b, err := bus.New(ctx, bus.Config{URLs: []string{url}, Token: token, Name: "pipeline-worker"})
	if err != nil {
		return err
	}
	defer b.Close()
	perf, err := agent.New(ctx, agent.Config{Name: "performance", Description: "Reviews a change for performance.",
		Model: specialistModel(fmt.Sprintf("Performance (worker process %d)", os.Getpid()), "profile"),
		Tools: []agent.Tool{profileTool()}, Permissions: agent.AllowAll(), Events: b,
		Elicitor: worker.Elicitor(nil)})
	if err != nil {
		return err
	}
	srv, err := worker.Serve(ctx, b, perf, worker.ServeConfig{MaxConcurrent: 4})
	if err != nil {
		return err
	}
	fmt.Fprintln(out, readyLine, srv.ID())
	<-srv.Done()
	return nil
}

// The models are scripted, so that the example runs offline; each reacts
// to its input as a real model would be prompted to.

// plannerModel writes the specialists' brief.
func plannerModel() llm.Model {
	return llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
		return llm.Say("Brief: " + lastUser(req) + ". Security: check what the cache stores and logs. " +
			"Performance: measure the handler with and without the cache.")
	}))
}

// specialistModel calls its tool once with the brief, then reports.
func specialistModel(title, tool string) llm.Model {
	return llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
		if last := req.Messages[len(req.Messages)-1]; last.Role == llm.RoleTool {
			return llm.Say(title + ": " + strip(last.ToolResults[0].Content))
		}
		return llm.Calls(llm.CallTool("", tool, map[string]string{"brief": lastUser(req)}))
	}))
}

// reviewerModel merges the specialists' sections into a verdict.
func reviewerModel() llm.Model {
	return llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
		in := lastUser(req)
		var findings, missing []string
		for _, sec := range strings.Split(in, "\n## ")[1:] {
			name, body, _ := strings.Cut(sec, "\n")
			if n, ok := strings.CutSuffix(name, " (failed; dropped)"); ok {
				missing = append(missing, n)
				continue
			}
			findings = append(findings, strings.TrimSpace(body))
		}
		verdict := "Approve"
		if len(missing) > 0 {
			verdict = "Approve once the missing review is done (" + strings.Join(missing, ", ") + ")"
		}
		who := fmt.Sprintf("%d specialists", len(findings))
		if len(findings) == 1 {
			who = "1 specialist"
		}
		return llm.Say(fmt.Sprintf("%s. Findings from %s: %s", verdict, who, strings.Join(findings, " | ")))
	}))
}

var briefSchema = json.RawMessage(`{"type":"object","properties":{"brief":{"type":"string"}},"required":["brief"]}`)

type briefArgs struct {
	Brief string `json:"brief"`
}

// scanTool stands for a secret scanner over the diff.
func scanTool() agent.Tool {
	return agent.TypedTool(agent.ToolSpec{Name: "scan_diff", Description: "Scans the change for secrets and unsafe logging.",
		InputSchema: briefSchema, ReadOnly: true},
		func(ctx context.Context, _ briefArgs) (string, error) {
			call, _ := agent.CallFromContext(ctx)
			for i, file := range []string{"login.go", "cache.go"} {
				call.ReportProgress(agent.Progress{Progress: float64(i + 1), Total: 2, Message: "scanned " + file})
			}
			return "no secrets logged; the cache key includes the user id.", nil
		})
}

// profileTool stands for a benchmark run of the handler.
func profileTool() agent.Tool {
	return agent.TypedTool(agent.ToolSpec{Name: "profile", Description: "Benchmarks the handler with and without the change.",
		InputSchema: briefSchema, ReadOnly: true},
		func(ctx context.Context, _ briefArgs) (string, error) {
			call, _ := agent.CallFromContext(ctx)
			call.ReportProgress(agent.Progress{Progress: 1, Total: 2, Message: "benchmarked without the cache"})
			call.ReportProgress(agent.Progress{Progress: 2, Total: 2, Message: "benchmarked with the cache"})
			return "p50 latency 4.1 ms → 1.3 ms; the cache is unbounded, cap it.", nil
		})
}

func lastUser(req *llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == llm.RoleUser {
			return req.Messages[i].Text
		}
	}
	return ""
}

// strip removes the tool_result envelope.
func strip(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(strings.TrimSuffix(s, "</tool_result>"))
}
