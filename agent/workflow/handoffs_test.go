package workflow_test

import (
	"context"
	"iter"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/workflow"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

func TestHandoffs(t *testing.T) {
	cases := []struct {
		mode string
		// what the billing agent must (and must not) see
		sees, hidden []string
	}{
		{mode: "task", sees: []string{"refund order 7"}, hidden: []string{"charged twice"}},
		{mode: "summary", sees: []string{"customer is angry", "refund order 7"}, hidden: []string{"charged twice"}},
		{mode: "full", sees: []string{"charged twice", "refund order 7", "handed the conversation to billing"}},
	}
	for _, tc := range cases {
		t.Run(string(tc.mode), func(t *testing.T) {
			ho, err := agent.NewHandoffTool("billing", &agent.HandoffOptions{Context: tc.mode})
			if err != nil {
				t.Fatal(err)
			}
			args := map[string]any{"task": "refund order 7"}
			if tc.mode == "summary" {
				args["summary"] = "customer is angry"
			}
			triage := newAgent(t, agent.Config{Name: "triage", Tools: []agent.Tool{ho},
				Model: llm.NewScripted(llm.Calls(llm.CallTool("h1", "handoff_to_billing", args)))})
			var seen string
			billing := newAgent(t, agent.Config{Name: "billing", Model: llm.NewScripted(llm.React(func(req *llm.Request) llm.Step {
				var b strings.Builder
				for _, m := range req.Messages {
					b.WriteString(m.Text + "\n")
					for _, r := range m.ToolResults {
						b.WriteString(r.Content + "\n")
					}
				}
				seen = b.String()
				return llm.Say("refunded")
			}))})
			h, err := workflow.NewHandoffs(workflow.HandoffsConfig{Common: workflow.Common{Name: "desk"},
				Agents: []*agent.Agent{triage, billing}})
			if err != nil {
				t.Fatal(err)
			}
			evs, err := drain(h.Stream(context.Background(), "I was charged twice"))
			if err != nil {
				t.Fatal(err)
			}
			if fin := evs[len(evs)-1]; fin.Text != "refunded" {
				t.Fatalf("final = %q", fin.Text)
			}
			mustContain(t, seen, tc.sees...)
			for _, h := range tc.hidden {
				if strings.Contains(seen, h) {
					t.Fatalf("billing saw %q with context %s:\n%s", h, tc.mode, seen)
				}
			}
			if n := len(nestedOf(evs, agent.EventHandoff)); n != 1 {
				t.Fatalf("%d handoff events", n)
			}
			steps := top(evs, agent.EventStepFinished)
			if len(steps) != 2 || steps[0].Step.Name != "triage" || steps[1].Step.Name != "billing" {
				t.Fatalf("steps = %v", steps)
			}
		})
	}
}

func TestHandoffsFailures(t *testing.T) {
	loopTool := func(to string) agent.Tool {
		tl, _ := agent.NewHandoffTool(to, nil)
		return tl
	}
	ping := newAgent(t, agent.Config{Name: "ping", Tools: []agent.Tool{loopTool("pong")},
		Model: llm.NewCyclic(llm.Calls(llm.CallTool("", "handoff_to_pong", map[string]any{"task": "go"})))})
	pong := newAgent(t, agent.Config{Name: "pong", Tools: []agent.Tool{loopTool("ping")},
		Model: llm.NewCyclic(llm.Calls(llm.CallTool("", "handoff_to_ping", map[string]any{"task": "go"})))})
	stray := newAgent(t, agent.Config{Name: "stray", Tools: []agent.Tool{loopTool("nobody")},
		Model: llm.NewCyclic(llm.Calls(llm.CallTool("", "handoff_to_nobody", map[string]any{"task": "go"})))})
	cases := []struct {
		name   string
		agents []*agent.Agent
		want   failure.Kind
	}{
		{name: "handoff budget", agents: []*agent.Agent{ping, pong}, want: failure.Budget},
		{name: "unknown target", agents: []*agent.Agent{stray}, want: failure.Config},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, err := workflow.NewHandoffs(workflow.HandoffsConfig{Common: workflow.Common{Name: "h"}, Agents: tc.agents, MaxHandoffs: 3})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := agent.Run(context.Background(), h, "x"); kind(t, err) != tc.want {
				t.Fatalf("err = %v, want %s", err, tc.want)
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	a := echoAgent(t, "a")
	cases := []struct {
		name string
		new  func() error
	}{
		{"no name", func() error {
			_, err := workflow.NewSequential(workflow.SequentialConfig{Steps: []workflow.Step{{Runner: a}}})
			return err
		}},
		{"no steps", func() error {
			_, err := workflow.NewSequential(workflow.SequentialConfig{Common: workflow.Common{Name: "s"}})
			return err
		}},
		{"nil runner", func() error {
			_, err := workflow.NewSequential(workflow.SequentialConfig{Common: workflow.Common{Name: "s"}, Steps: []workflow.Step{{}}})
			return err
		}},
		{"duplicate step", func() error {
			_, err := workflow.NewParallel(workflow.ParallelConfig{Common: workflow.Common{Name: "p"}, Branches: []workflow.Step{{Runner: a}, {Runner: a}}})
			return err
		}},
		{"loop without body", func() error {
			_, err := workflow.NewLoop(workflow.LoopConfig{Common: workflow.Common{Name: "l"}})
			return err
		}},
		{"unknown entry", func() error {
			_, err := workflow.NewHandoffs(workflow.HandoffsConfig{Common: workflow.Common{Name: "h"}, Agents: []*agent.Agent{a}, Entry: "b"})
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.new(); kind(t, err) != failure.Config {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

// TestWorkflowAsTool offers a workflow to an agent as a tool: the
// workflow's events and its steps' events reach the agent's stream.
func TestWorkflowAsTool(t *testing.T) {
	seq, _ := workflow.NewSequential(workflow.SequentialConfig{Common: workflow.Common{Name: "research", Description: "researches"},
		Steps: []workflow.Step{{Runner: echoAgent(t, "a")}, {Runner: echoAgent(t, "b")}}})
	tl, err := agent.AsTool(seq, nil)
	if err != nil {
		t.Fatal(err)
	}
	lead := newAgent(t, agent.Config{Name: "lead", Tools: []agent.Tool{tl},
		Model: llm.NewScripted(llm.Calls(llm.CallTool("c", "research", map[string]any{"input": "q"})), llm.SummarizeResults("lead: "))})
	var evs []agent.Event
	for ev, err := range lead.Stream(context.Background(), "go") {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	fin := evs[len(evs)-1]
	mustContain(t, fin.Text, "b(a(q))")
	// The tree: lead -> research (via call c) -> a, b (via steps).
	var wfRun string
	agents := map[string]*agent.Parent{}
	for _, e := range evs {
		if e.Type == agent.EventNested {
			agents[e.Nested.Agent] = e.Nested.Parent
			if e.Nested.Agent == "research" {
				wfRun = e.Nested.Run
			}
		}
	}
	if p := agents["research"]; p == nil || p.Run != fin.Run || p.Call != "c" {
		t.Fatalf("research's parent = %+v", p)
	}
	for _, name := range []string{"a", "b"} {
		if p := agents[name]; p == nil || p.Run != wfRun || p.Step != name {
			t.Fatalf("%s's parent = %+v, want run %s", name, p, wfRun)
		}
	}
}

// callProbe is a Runner that records the tool call its run belongs to.
type callProbe struct {
	agent.Runner
	got chan string
}

func (c callProbe) Stream(ctx context.Context, input string) iter.Seq2[agent.Event, error] {
	id := "none"
	if call, ok := agent.CallFromContext(ctx); ok {
		id = call.ID
	}
	c.got <- id
	return c.Runner.Stream(ctx, input)
}

// TestStepSeesEnclosingCall: the steps of a workflow that runs as a tool
// still belong to that tool call (their questions and progress go there).
func TestStepSeesEnclosingCall(t *testing.T) {
	probe := callProbe{Runner: echoAgent(t, "a"), got: make(chan string, 1)}
	seq, _ := workflow.NewSequential(workflow.SequentialConfig{Common: workflow.Common{Name: "wf"}, Steps: []workflow.Step{{Runner: probe}}})
	tl, _ := agent.AsTool(seq, nil)
	lead := newAgent(t, agent.Config{Name: "lead", Tools: []agent.Tool{tl},
		Model: llm.NewScripted(llm.Calls(llm.CallTool("c7", "wf", map[string]any{"input": "q"})), llm.Say("done"))})
	if _, err := lead.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	if got := <-probe.got; got != "c7" {
		t.Fatalf("the step's run belongs to call %q, want c7", got)
	}
	// Outside any tool call there is none.
	if _, err := agent.Run(context.Background(), seq, "q"); err != nil {
		t.Fatal(err)
	}
	if got := <-probe.got; got != "none" {
		t.Fatalf("outside a call: %q", got)
	}
}
