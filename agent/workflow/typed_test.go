package workflow_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/workflow"
	"github.com/switchboard-dev/switchboard/llm"
)

// Extract is the typed answer of the extraction step.
type Extract struct {
	Vendor string  `json:"vendor"`
	Total  float64 `json:"total"`
}

// askedAgent answers with reply(req) and records whether each request
// asked for a typed answer (llm.Request.Output).
func askedAgent(t *testing.T, name string, asked *[]bool, mu *sync.Mutex, reply func(req *llm.Request) string) *agent.Agent {
	return newAgent(t, agent.Config{Name: name, Model: llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
		mu.Lock()
		*asked = append(*asked, req.Output != nil)
		mu.Unlock()
		return llm.Say(reply(req))
	}))})
}

// TestTypedSteps: a typed step's value reaches the next step (as the
// default input, its JSON; and decoded from Input.PreviousData), a step's
// Output asks its runner for a shape, the sequence's answer carries its
// last step's Data and declares its shape (agent.OutputOf), and an answer
// shape asked of the workflow (agent.RunAs) goes to its last step only.
func TestTypedSteps(t *testing.T) {
	extractOut, err := agent.OutputFor[Extract]()
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var extractAsked, summaryAsked []bool
	extract := askedAgent(t, "extract", &extractAsked, &mu, func(*llm.Request) string {
		return "```json\n{\"vendor\": \"ACME\", \"total\": 120.5}\n```"
	})
	var defaultInput string
	echoJSON := askedAgent(t, "summary", &summaryAsked, &mu, func(req *llm.Request) string {
		defaultInput = lastUser(req)
		return `{"line":"` + strings.ReplaceAll(lastUser(req), `"`, `'`) + `"}`
	})
	lineOut := &llm.Output{Name: "line", Schema: json.RawMessage(`{"type":"object","properties":{"line":{"type":"string"}},"required":["line"]}`)}

	cases := []struct {
		name      string
		second    workflow.Step
		runAs     bool
		wantInput string // the second step's input
	}{
		{name: "default input is the value's JSON", second: workflow.Step{Runner: echoJSON, Output: lineOut},
			wantInput: `{"vendor": "ACME", "total": 120.5}`},
		{name: "typed step func", second: workflow.Step{Runner: echoJSON, Output: lineOut, Input: func(in workflow.Input) string {
			var e Extract
			if err := json.Unmarshal(in.PreviousData, &e); err != nil {
				return "no value: " + err.Error()
			}
			return fmt.Sprintf("%s owes %.2f", e.Vendor, e.Total)
		}}, wantInput: "ACME owes 120.50"},
		{name: "the workflow's shape goes to the last step", second: workflow.Step{Runner: echoJSON}, runAs: true,
			wantInput: `{"vendor": "ACME", "total": 120.5}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			extractAsked, summaryAsked = nil, nil
			seq, err := workflow.NewSequential(workflow.SequentialConfig{Common: workflow.Common{Name: "pipeline"},
				Steps: []workflow.Step{{Runner: extract, Output: extractOut}, tc.second}})
			if err != nil {
				t.Fatal(err)
			}
			var data json.RawMessage
			if tc.runAs {
				type Line struct {
					Line string `json:"line"`
				}
				l, ans, err := agent.RunAs[Line](context.Background(), seq, "read the invoice")
				if err != nil {
					t.Fatal(err)
				}
				if l.Line != strings.ReplaceAll(tc.wantInput, `"`, `'`) {
					t.Fatalf("RunAs = %+v", l)
				}
				data = ans.Data
			} else {
				if got := agent.OutputOf(seq); got != lineOut {
					t.Fatalf("OutputOf(sequence) = %+v, want the last step's", got)
				}
				ans, err := agent.Run(context.Background(), seq, "read the invoice")
				if err != nil {
					t.Fatal(err)
				}
				data = ans.Data
			}
			if defaultInput != tc.wantInput {
				t.Fatalf("second step's input %q, want %q", defaultInput, tc.wantInput)
			}
			var line struct{ Line string }
			if err := json.Unmarshal(data, &line); err != nil || line.Line == "" {
				t.Fatalf("workflow Data %s: want the last step's value", data)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(extractAsked) != 1 || !extractAsked[0] || len(summaryAsked) != 1 || !summaryAsked[0] {
				t.Fatalf("asked for a shape: extract %v, summary %v; want both asked once", extractAsked, summaryAsked)
			}
		})
	}
}

// TestTypedBranches: typed branches' values reach the merge step as
// BranchResult.Data, and the steps do not see the workflow's own Input:
// the shape asked of the workflow goes to its merge step only.
func TestTypedBranches(t *testing.T) {
	out := &llm.Output{Schema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)}
	var mu sync.Mutex
	var asked []bool
	typed := newAgent(t, agent.Config{Name: "typed", Output: out, Model: llm.NewCyclic(llm.Say(`{"n": 7}`))})
	plain := askedAgent(t, "plain", &asked, &mu, func(*llm.Request) string { return "seven" })
	var results []workflow.BranchResult
	par, err := workflow.NewParallel(workflow.ParallelConfig{Common: workflow.Common{Name: "fan"},
		Branches: []workflow.Step{{Runner: typed}, {Runner: plain}},
		Merge: &workflow.Step{Runner: newAgent(t, agent.Config{Name: "merge", Model: llm.NewCyclic(llm.Say(`{"n": 8}`))}), Input: func(in workflow.Input) string {
			results = in.Results
			return in.Previous
		}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := agent.WithInput(context.Background(), agent.Input{Output: out})
	ans, err := agent.Run(ctx, par, "count")
	if err != nil || string(ans.Data) != `{"n": 8}` {
		t.Fatalf("answer %+v, %v: want the merge step's value", ans, err)
	}
	if len(results) != 2 || string(results[0].Data) != `{"n": 7}` || results[0].Output != `{"n": 7}` || results[1].Data != nil || results[1].Output != "seven" {
		t.Fatalf("results %+v", results)
	}
	if len(asked) != 1 || asked[0] {
		t.Fatalf("the untyped branch was asked for a shape: %v", asked)
	}
}
