package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// subAgent answers with a tool call of "lookup" and then a summary.
func subAgent(t *testing.T, name string, budget agent.Budget, lookup agent.Tool) *agent.Agent {
	t.Helper()
	return newAgent(t, agent.Config{Name: name, Description: "looks things up",
		Model: llm.NewCyclic(llm.Calls(llm.CallTool("", "lookup", map[string]any{"q": "x"})), llm.SummarizeResults(name+" found: ")),
		Tools: []agent.Tool{lookup}, Budget: budget})
}

func TestAsTool(t *testing.T) {
	lookup := tool("lookup", func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
		c, _ := agent.CallFromContext(ctx)
		c.ReportProgress(agent.Progress{Progress: 1, Total: 1})
		return agent.TextResult("fact"), nil
	})
	cases := []struct {
		name     string
		budget   agent.Budget
		args     any
		wantText string
		wantErr  bool // a tool result with IsError
		noRun    bool // the sub-agent never runs
	}{
		{name: "answers", args: map[string]any{"input": "find x"}, wantText: "researcher found:"},
		{name: "own budget ends the sub-run", budget: agent.Budget{MaxTurns: 1}, args: map[string]any{"input": "find x"},
			wantText: "stopped before answering", wantErr: true},
		{name: "empty input", args: map[string]any{"input": " "}, wantText: `"input" is empty`, wantErr: true, noRun: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sub := subAgent(t, "researcher", tc.budget, lookup)
			st, err := agent.AsTool(sub, nil)
			if err != nil {
				t.Fatal(err)
			}
			if st.Spec().Name != "researcher" || st.Spec().Source.Kind != failure.SourceAgent {
				t.Fatalf("spec = %+v", st.Spec())
			}
			parent := newAgent(t, agent.Config{Name: "lead",
				Model: llm.NewScripted(llm.Calls(llm.CallTool("c1", "researcher", tc.args)), llm.SummarizeResults("lead: ")),
				Tools: []agent.Tool{st}})
			evs, err := collect(t, parent.Stream(context.Background(), "go"))
			if err != nil {
				t.Fatal(err)
			}
			fin := eventsOf(evs, agent.EventToolFinished)
			if len(fin) != 1 {
				t.Fatalf("%d tool_finished events", len(fin))
			}
			got := fin[0].Result
			if !strings.Contains(got.Text(), tc.wantText) || got.IsError != tc.wantErr {
				t.Fatalf("result = %q (error %v), want %q (error %v)", got.Text(), got.IsError, tc.wantText, tc.wantErr)
			}
			if tc.noRun {
				if n := len(eventsOf(evs, agent.EventNested)); n != 0 {
					t.Fatalf("%d nested events for a call that never ran the sub-agent", n)
				}
				return
			}
			// Every event of the sub-run is nested under the call, in order.
			nested := eventsOf(evs, agent.EventNested)
			if len(nested) == 0 {
				t.Fatal("no nested events")
			}
			first, last := nested[0].Nested, nested[len(nested)-1].Nested
			if first.Type != agent.EventRunStarted || first.Agent != "researcher" {
				t.Fatalf("first nested = %+v", first)
			}
			want := agent.EventFinal
			if tc.wantErr {
				want = agent.EventRunFailed
			}
			if last.Type != want {
				t.Fatalf("last nested = %s, want %s", last.Type, want)
			}
			root := evs[0].Run
			for i, n := range nested {
				if n.Call == nil || n.Call.ID != "c1" {
					t.Fatalf("nested %d not tied to the call: %+v", i, n.Call)
				}
				if p := n.Nested.Parent; p == nil || p.Run != root || p.Call != "c1" {
					t.Fatalf("nested %d parent = %+v, want run %s call c1", i, p, root)
				}
				if n.Nested.Seq != i+1 {
					t.Fatalf("nested %d has seq %d: events lost or reordered", i, n.Nested.Seq)
				}
			}
			for _, e := range evs {
				if e.Type != agent.EventNested && (e.Parent != nil || e.Agent != "lead") {
					t.Fatalf("top-level event %s has parent %+v agent %q", e.Type, e.Parent, e.Agent)
				}
			}
		})
	}
}

// TestAsToolNestsTwoLevels checks that a grandchild's events reach the top
// run flattened (Nested is never itself nested) and placed by Parent.
func TestAsToolNestsTwoLevels(t *testing.T) {
	leaf := tool("lookup", func(context.Context, json.RawMessage) (*agent.Result, error) { return agent.TextResult("fact"), nil })
	inner := subAgent(t, "inner", agent.Budget{}, leaf)
	innerTool, _ := agent.AsTool(inner, nil)
	middle := newAgent(t, agent.Config{Name: "middle",
		Model: llm.NewCyclic(llm.Calls(llm.CallTool("m1", "inner", map[string]any{"input": "dig"})), llm.SummarizeResults("middle: ")),
		Tools: []agent.Tool{innerTool}})
	middleTool, _ := agent.AsTool(middle, &agent.AgentToolOptions{Name: "delegate", Timeout: time.Minute})
	if middleTool.Spec().Timeout != time.Minute {
		t.Fatal("timeout not in spec")
	}
	top := newAgent(t, agent.Config{Name: "top",
		Model: llm.NewScripted(llm.Calls(llm.CallTool("t1", "delegate", map[string]any{"input": "go"})), llm.SummarizeResults("top: ")),
		Tools: []agent.Tool{middleTool}})
	evs, err := collect(t, top.Stream(context.Background(), "go"))
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]string{} // run -> agent
	parents := map[string]string{}
	for _, e := range eventsOf(evs, agent.EventNested) {
		if e.Nested.Type == agent.EventNested {
			t.Fatal("a nested event nests another")
		}
		runs[e.Nested.Run] = e.Nested.Agent
		parents[e.Nested.Run] = e.Nested.Parent.Run
	}
	var innerRun, middleRun string
	for run, name := range runs {
		switch name {
		case "inner":
			innerRun = run
		case "middle":
			middleRun = run
		}
	}
	if innerRun == "" || middleRun == "" {
		t.Fatalf("runs seen: %v", runs)
	}
	if parents[innerRun] != middleRun || parents[middleRun] != evs[0].Run {
		t.Fatalf("tree wrong: inner's parent %s (middle %s), middle's parent %s (top %s)",
			parents[innerRun], middleRun, parents[middleRun], evs[0].Run)
	}
	if last := evs[len(evs)-1]; last.Type != agent.EventFinal || !strings.Contains(last.Text, "delegate: middle:") {
		t.Fatalf("final = %+v", last)
	}
}

// TestAsToolCancel cancels the calling run while the sub-agent waits in a
// tool: the sub-run ends, and both histories answer every call.
func TestAsToolCancel(t *testing.T) {
	started := make(chan struct{})
	block := tool("lookup", func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	sub := subAgent(t, "researcher", agent.Budget{}, block)
	st, _ := agent.AsTool(sub, nil)
	parent := newAgent(t, agent.Config{Name: "lead",
		Model: llm.NewScripted(llm.Calls(llm.CallTool("c1", "researcher", map[string]any{"input": "x"}))),
		Tools: []agent.Tool{st}})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	s := parent.NewSession()
	_, err := s.Run(ctx, "go")
	if !errors.Is(err, failure.Canceled) {
		t.Fatalf("err = %v, want Canceled", err)
	}
	checkOneResultPerCall(t, s.History())
}

func TestAsToolConfig(t *testing.T) {
	sub := newAgent(t, agent.Config{Name: "a b/c", Model: llm.NewScripted(llm.Say("x"))})
	cases := []struct {
		name    string
		r       agent.Runner
		opts    *agent.AgentToolOptions
		want    string
		wantErr bool
	}{
		{name: "sanitised name", r: sub, want: "a_b_c"},
		{name: "custom", r: sub, opts: &agent.AgentToolOptions{Name: "x", InputSchema: json.RawMessage(`{"type":"object"}`)}, want: "x"},
		{name: "nil runner", wantErr: true},
		{name: "bad schema", r: sub, opts: &agent.AgentToolOptions{InputSchema: json.RawMessage(`{`)}, wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tl, err := agent.AsTool(tc.r, tc.opts)
			if tc.wantErr {
				if !errors.Is(err, failure.Config) {
					t.Fatalf("err = %v, want a Config failure", err)
				}
				return
			}
			if err != nil || tl.Spec().Name != tc.want {
				t.Fatalf("AsTool = %v, %v; want name %q", tl, err, tc.want)
			}
		})
	}
}

func TestHandoffTool(t *testing.T) {
	cases := []struct {
		mode        string
		args        map[string]any
		wantHistory bool
		wantInput   string
	}{
		{mode: "task", args: map[string]any{"task": "fix it"}, wantInput: "fix it"},
		{mode: "summary", args: map[string]any{"task": "fix it", "summary": "we met"}, wantInput: "Summary of the conversation so far:\nwe met\n\nTask:\nfix it"},
		{mode: "full", args: map[string]any{"task": "fix it"}, wantHistory: true, wantInput: "fix it"},
	}
	for _, tc := range cases {
		t.Run(string(tc.mode), func(t *testing.T) {
			h, err := agent.NewHandoffTool("billing", &agent.HandoffOptions{Context: tc.mode})
			if err != nil {
				t.Fatal(err)
			}
			other := echoTool("other", nil)
			a := newAgent(t, agent.Config{Name: "triage",
				Model: llm.NewScripted(llm.Calls(llm.CallTool("o", "other", map[string]any{}), llm.CallTool("h", "handoff_to_billing", tc.args)),
					llm.Say("never reached")),
				Tools: []agent.Tool{h, other}})
			s := a.NewSession()
			evs, err := collect(t, s.Stream(context.Background(), "I was charged twice"))
			if err != nil {
				t.Fatal(err)
			}
			last := evs[len(evs)-1]
			if last.Type != agent.EventFinal || last.Answer == nil || last.Answer.Handoff == nil {
				t.Fatalf("last event = %+v", last)
			}
			ho := last.Answer.Handoff
			if ho.To != "billing" || ho.Input() != tc.wantInput || (len(ho.History) > 0) != tc.wantHistory {
				t.Fatalf("handoff = %+v, input %q", ho, ho.Input())
			}
			if n := len(eventsOf(evs, agent.EventHandoff)); n != 1 {
				t.Fatalf("%d handoff events", n)
			}
			if last.Answer.Turns != 1 {
				t.Fatalf("the run went on after the handoff: %d turns", last.Answer.Turns)
			}
			checkOneResultPerCall(t, s.History())
			if tc.wantHistory {
				checkOneResultPerCall(t, ho.History)
			}
		})
	}
	if _, err := agent.NewHandoffTool("", nil); !errors.Is(err, failure.Config) {
		t.Fatalf("empty target: %v", err)
	}
	if _, err := agent.NewHandoffTool("x", &agent.HandoffOptions{Context: "all"}); !errors.Is(err, failure.Config) {
		t.Fatalf("bad context: %v", err)
	}
}

func TestCollect(t *testing.T) {
	a := newAgent(t, agent.Config{Name: "a", Model: llm.NewScripted(llm.Say("hello there"))})
	ans, err := agent.Run(context.Background(), runnerOnly{a}, "hi")
	if err != nil || ans.Text != "hello there" || ans.Turns != 1 || ans.Run == "" {
		t.Fatalf("Run = %+v, %v", ans, err)
	}
	if _, err := agent.Run(context.Background(), emptyRunner{runnerOnly{a}}, "hi"); !errors.Is(err, failure.Internal) {
		t.Fatalf("empty stream: %v", err)
	}
}

// emptyRunner's runs end without an answer or an error.
type emptyRunner struct{ agent.Runner }

func (emptyRunner) Stream(context.Context, string) iter.Seq2[agent.Event, error] {
	return func(func(agent.Event, error) bool) {}
}

// runnerOnly hides *Agent's type so agent.Run takes the Stream path.
type runnerOnly struct{ agent.Runner }
