package llm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/failure"
)

func userReq(text string) *Request {
	return &Request{Messages: []Message{{Role: RoleUser, Text: text}}}
}

func TestScriptedPlaysStepsInOrder(t *testing.T) {
	boom := failure.New(failure.Transient, failure.SourceModel, "scripted outage")
	m := NewScripted(
		Say("first answer"),
		Calls(CallTool("c1", "read_file", map[string]string{"path": "a.txt"}), CallTool("c2", "list_dir", nil)),
		Step{Err: boom},
		Say("last"),
	)
	if m.Name() != scriptedName || !strings.Contains(m.Name(), "scripted") {
		t.Errorf("name %q does not say it is scripted", m.Name())
	}
	type want struct {
		text  string
		calls []string
		stop  string
		err   error
	}
	wants := []want{
		{text: "first answer", stop: "end_turn"},
		{calls: []string{"c1:read_file:{\"path\":\"a.txt\"}", "c2:list_dir:"}, stop: "tool_use"},
		{err: boom},
		{text: "last", stop: "end_turn"},
	}
	for i, w := range wants {
		resp, err := m.Generate(t.Context(), userReq("go"))
		if w.err != nil {
			if !errors.Is(err, w.err) {
				t.Fatalf("turn %d: err = %v, want %v", i, err, w.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		var calls []string
		for _, c := range resp.Message.ToolCalls {
			calls = append(calls, fmt.Sprintf("%s:%s:%s", c.ID, c.Name, c.Args))
		}
		if resp.Message.Role != RoleAssistant || resp.Message.Text != w.text || fmt.Sprint(calls) != fmt.Sprint(w.calls) || resp.StopReason != w.stop {
			t.Errorf("turn %d: got %q %q %q, want %q %q %q", i, resp.Message.Text, calls, resp.StopReason, w.text, w.calls, w.stop)
		}
	}
	_, err := m.Generate(t.Context(), userReq("more"))
	var fe *failure.Error
	if !errors.As(err, &fe) || fe.Kind != failure.Model || fe.Source != failure.SourceModel || !strings.Contains(fe.Message, "exhausted after 4 turns") {
		t.Errorf("exhausted script: %v", err)
	}
	if got := m.Requests(); got != 5 {
		t.Errorf("Requests() = %d, want 5", got)
	}
}

func TestScriptedCyclic(t *testing.T) {
	m := NewCyclic(Say("a"), Say("b"))
	var got []string
	for range 5 {
		resp, err := m.Generate(t.Context(), userReq("x"))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, resp.Message.Text)
	}
	if strings.Join(got, "") != "ababa" {
		t.Errorf("cyclic played %q", got)
	}
	if _, err := NewCyclic().Generate(t.Context(), userReq("x")); !errors.Is(err, failure.Model) {
		t.Errorf("empty cyclic script: %v", err)
	}
}

func TestScriptedReacts(t *testing.T) {
	results := &Request{Messages: []Message{
		{Role: RoleUser, Text: "check"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "1", Name: "ping"}, {ID: "2", Name: "fetch"}}},
		{Role: RoleTool, ToolResults: []ToolResult{
			{CallID: "1", Name: "ping", Content: "<tool_result source=\"local\">\npong\nsecond line\n</tool_result>"},
			{CallID: "2", Name: "fetch", Content: "Error (timeout) from tool \"fetch\": it timed out", IsError: true},
		}},
	}}
	tests := []struct {
		name string
		step Step
		req  *Request
		want string
	}{
		{"summary of results and errors", SummarizeResults("Done."), results,
			"Done. (2 tool results, 1 errors)\n- ping: pong\n- fetch: Error (timeout) from tool \"fetch\": it timed out"},
		{"summary without results", SummarizeResults("Nothing."), userReq("hi"), "Nothing. (0 tool results, 0 errors)"},
		{"react on an error result", React(func(r *Request) Step {
			for _, res := range lastToolResults(r) {
				if res.IsError {
					return Say("retrying " + res.Name)
				}
			}
			return Say("all good")
		}), results, "retrying fetch"},
		{"react returning a reaction", React(func(*Request) Step { return React(func(*Request) Step { return Say("nested") }) }),
			userReq("x"), "nested"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := NewScripted(tt.step).Generate(t.Context(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Text != tt.want {
				t.Errorf("text = %q, want %q", resp.Message.Text, tt.want)
			}
		})
	}
	long := &Request{Messages: []Message{{Role: RoleTool, ToolResults: []ToolResult{{Name: "big", Content: strings.Repeat("y", 300)}}}}}
	resp, err := NewScripted(SummarizeResults("S")).Generate(t.Context(), long)
	if err != nil || !strings.HasSuffix(resp.Message.Text, "- big: "+strings.Repeat("y", 120)+"…") {
		t.Errorf("long result not cut at 120 characters: %q, %v", resp.Message.Text, err)
	}
}

func TestScriptedStreamsAndCountsUsage(t *testing.T) {
	m := NewScripted(Say("one two three"), Calls(CallTool("a", "t", `{"x":`), CallTool("b", "t", []byte(nil))))
	var deltas []string
	req := &Request{Messages: []Message{{Role: RoleUser, Text: "four words in here"}}, OnText: func(d string) { deltas = append(deltas, d) }}
	resp, err := m.Generate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(deltas) != fmt.Sprint([]string{"one ", "two ", "three"}) {
		t.Errorf("streamed %q", deltas)
	}
	if resp.Usage != (Usage{InputTokens: 5, OutputTokens: 3}) || resp.Usage.Total() != 8 {
		t.Errorf("usage = %+v", resp.Usage)
	}
	resp, err = m.Generate(t.Context(), &Request{Messages: []Message{{Role: RoleTool, ToolResults: []ToolResult{{Content: "a b"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Message.ToolCalls[0].Args) != `{"x":` {
		t.Errorf("malformed args were not kept verbatim: %q", resp.Message.ToolCalls[0].Args)
	}
	if resp.Usage != (Usage{InputTokens: 1, OutputTokens: 20}) {
		t.Errorf("usage = %+v", resp.Usage)
	}
	// The returned calls are a copy: editing them does not edit the script.
	resp.Message.ToolCalls[0].ID = "changed"
	if m.steps[1].Calls[0].ID != "a" {
		t.Error("the response shares the script's calls")
	}
}

func TestScriptedCancelledContext(t *testing.T) {
	m := NewScripted(Say("never"))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := m.Generate(ctx, userReq("x")); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
	if m.Requests() != 0 {
		t.Error("a cancelled call consumed a step")
	}
}

func TestCallToolPanicsOnUnencodableArgs(t *testing.T) {
	defer func() {
		if v := recover(); v == nil || !strings.Contains(fmt.Sprint(v), "bad") {
			t.Errorf("recovered %v", v)
		}
	}()
	CallTool("1", "bad", map[string]any{"ch": make(chan int)})
}

func TestScriptedConcurrentCallers(t *testing.T) {
	steps := make([]Step, 50)
	for i := range steps {
		steps[i] = Say(fmt.Sprint(i))
	}
	m := NewScripted(steps...)
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[string]bool{}
	for range 50 {
		wg.Go(func() {
			resp, err := m.Generate(context.Background(), userReq("x"))
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			seen[resp.Message.Text] = true
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(seen) != 50 {
		t.Errorf("%d distinct steps played by 50 callers, want 50", len(seen))
	}
}
