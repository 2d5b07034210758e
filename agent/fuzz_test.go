package agent_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
)

// FuzzToolCallArgs feeds arbitrary bytes as a model's tool-call arguments:
// the run never panics or hangs, the call gets exactly one result, and the
// tool only ever sees a JSON object that matches its schema.
func FuzzToolCallArgs(f *testing.F) {
	for _, s := range []string{``, `null`, `{}`, `{"n":1}`, `{"n":"x"}`, `[1]`, `"s"`, `{"n":`, "\x00", `{"n":1e999}`, `{"n":1}{"n":2}`} {
		f.Add(s)
	}
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)
	f.Fuzz(func(t *testing.T, args string) {
		var sawBad bool
		typed := agent.NewFuncTool(agent.ToolSpec{Name: "typed", InputSchema: schema}, func(_ context.Context, raw json.RawMessage) (*agent.Result, error) {
			var in struct {
				N *json.Number `json:"n"`
			}
			if err := json.Unmarshal(raw, &in); err != nil || in.N == nil {
				sawBad = true
			}
			return agent.TextResult("ok"), nil
		})
		model := llm.NewScripted(llm.Calls(llm.ToolCall{ID: "c", Name: "typed", Args: json.RawMessage(args)}), llm.Say("done"))
		a, err := agent.New(context.Background(), agent.Config{Model: model, Tools: []agent.Tool{typed}, Permissions: agent.AllowAll()})
		if err != nil {
			t.Fatal(err)
		}
		s := a.NewSession()
		if _, err := s.Run(context.Background(), "go"); err != nil {
			t.Fatalf("run failed on args %q: %v", args, err)
		}
		checkOneResultPerCall(t, s.History())
		if sawBad {
			t.Fatalf("the tool received arguments that do not match its schema: %q", args)
		}
	})
}

// FuzzNestedToolArgs feeds arbitrary bytes as the arguments of an agent
// offered as a tool and of a handoff tool, in one turn: the run never
// panics or hangs, every call gets exactly one result, and a run that ends
// with a handoff carries a non-empty task.
func FuzzNestedToolArgs(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"input":"x"}`, `{"input":""}`, `{"task":"t"}`, `{"task":"t","summary":"s"}`,
		`{"input":1}`, `{"task":null}`, `[`, `{"input":"x","extra":1}`} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, subArgs, handoffArgs string) {
		sub, err := agent.New(context.Background(), agent.Config{Name: "sub", Model: llm.NewCyclic(llm.Say("sub answer"))})
		if err != nil {
			t.Fatal(err)
		}
		st, _ := agent.AsTool(sub, nil)
		ho, _ := agent.NewHandoffTool("next", &agent.HandoffOptions{Context: "summary"})
		model := llm.NewScripted(llm.Calls(
			llm.ToolCall{ID: "a", Name: "sub", Args: json.RawMessage(subArgs)},
			llm.ToolCall{ID: "h", Name: "handoff_to_next", Args: json.RawMessage(handoffArgs)}), llm.Say("done"))
		a, err := agent.New(context.Background(), agent.Config{Name: "lead", Model: model, Tools: []agent.Tool{st, ho},
			Permissions: agent.AllowAll()})
		if err != nil {
			t.Fatal(err)
		}
		s := a.NewSession()
		ans, err := s.Run(context.Background(), "go")
		if err != nil {
			t.Fatalf("run failed on args %q, %q: %v", subArgs, handoffArgs, err)
		}
		checkOneResultPerCall(t, s.History())
		if ans.Handoff != nil && ans.Handoff.Task == "" {
			t.Fatalf("a handoff without a task from %q", handoffArgs)
		}
	})
}
