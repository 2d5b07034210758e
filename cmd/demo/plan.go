package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
)

// task is what the demo asks the main agent.
const task = "Prepare a short status report from notes.md in the workspace: use the report-writer skill, " +
	"ask the researcher agent for the latest findings on the topic, index the workspace, and save the report as report.md."

// notes is the file the demo's workspace starts with.
const notes = `# Project Atlas: notes

- Migration of the billing service is 80% done; two endpoints left.
- Latency p99 went from 420 ms to 310 ms after the cache change.
- Risk: the vendor API deprecates v1 on 2027-03-01.
- Team asked for a decision on the search index by Friday.
`

// resultOf returns the text of the last result of the named tool in the
// conversation, without its <tool_result> envelope.
func resultOf(req *llm.Request, tool string) (string, bool) {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		for _, r := range req.Messages[i].ToolResults {
			if r.Name == tool {
				c := r.Content
				if j := strings.IndexByte(c, '\n'); j >= 0 && strings.HasPrefix(c, "<tool_result") {
					c = strings.TrimSuffix(c[j+1:], "\n</tool_result>")
				}
				return c, !r.IsError
			}
		}
	}
	return "", false
}

// mainScript is the scripted plan of the main agent. Each step reacts to
// what the tools returned, as a model would: the first write is missing its
// content (an argument error the agent reports back), and the second fixes it.
func mainScript(peerTool string) []llm.Step {
	return []llm.Step{
		{Text: "I'll read the notes and load the report-writer skill first.", Calls: []llm.ToolCall{
			llm.CallTool("read", "mcp__files__read_file", map[string]string{"path": "notes.md"}),
			llm.CallTool("skill", "activate_skill", map[string]string{"name": "report-writer"}),
		}},
		llm.Calls(
			llm.CallTool("index", "mcp__files__index_files", map[string]string{}),
			llm.CallTool("delegate", peerTool, map[string]string{"message": "What are the latest findings on billing-service migrations and API deprecations? Two bullets."}),
		),
		// A model mistake: content is missing. The agent validates the
		// arguments against the tool's schema and tells the model.
		llm.Calls(llm.CallTool("write1", "mcp__files__write_file", map[string]string{"path": "report.md"})),
		llm.React(func(req *llm.Request) llm.Step {
			notes, _ := resultOf(req, "mcp__files__read_file")
			findings, _ := resultOf(req, peerTool)
			return llm.Calls(llm.CallTool("write2", "mcp__files__write_file", map[string]string{
				"path": "report.md", "content": renderReport(notes, findings)}))
		}),
		llm.React(func(req *llm.Request) llm.Step {
			written, ok := resultOf(req, "mcp__files__write_file")
			if !ok {
				return llm.Say("I could not save the report: " + written)
			}
			indexed, _ := resultOf(req, "mcp__files__index_files")
			return llm.Say(fmt.Sprintf("The report is ready: %s. Workspace: %s. It combines the notes with the researcher's findings "+
				"and follows the report-writer template (summary, key points, risks, next steps).", written, indexed))
		}),
	}
}

// renderReport fills the skill's template from the notes and the findings.
func renderReport(notes, findings string) string {
	var points []string
	for _, l := range strings.Split(notes, "\n") {
		if strings.HasPrefix(l, "- ") {
			points = append(points, l)
		}
	}
	var b strings.Builder
	b.WriteString("# Project Atlas: status\n\n")
	b.WriteString("**Summary:** migration nearly done, latency down, one vendor deadline to plan for.\n\n## Key points\n")
	for _, p := range points {
		if !strings.Contains(p, "Risk") {
			b.WriteString(p + "\n")
		}
	}
	b.WriteString("\n## Risks\n- The vendor API deprecates v1 on 2027-03-01.\n\n## Research findings\n")
	b.WriteString(strings.TrimSpace(findings) + "\n\n## Next steps\n- Decide on the search index by Friday.\n")
	return b.String()
}

// researcherScript is the scripted plan of the peer agent: it searches
// (reporting progress) and answers with findings.
func researcherScript() []llm.Step {
	return []llm.Step{
		llm.Calls(llm.CallTool("search", "search_sources", map[string]string{"topic": "billing migrations"})),
		llm.React(func(req *llm.Request) llm.Step {
			found, _ := resultOf(req, "search_sources")
			return llm.Say("Findings:\n" + found)
		}),
	}
}

// searchTool is the researcher's local tool: it "searches" in steps,
// reporting progress, and returns fixed findings.
func searchTool(step time.Duration) agent.Tool {
	return agent.NewFuncTool(agent.ToolSpec{Name: "search_sources", Description: "Search research sources on a topic.", ReadOnly: true,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"topic":{"type":"string"}},"required":["topic"]}`)},
		func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
			call, _ := agent.CallFromContext(ctx)
			sources := []string{"engineering blog", "vendor changelog", "incident reviews", "RFC archive"}
			for i, s := range sources {
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-time.After(step):
				}
				call.ReportProgress(agent.Progress{Progress: float64(i + 1), Total: float64(len(sources)), Message: "searched " + s})
			}
			return agent.TextResult("- Staged migrations with dual writes cut rollback time by half in comparable services.\n" +
				"- Vendors usually keep deprecated API versions readable for 90 days after the cut-off; plan the switch before it."), nil
		})
}
