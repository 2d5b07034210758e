package console

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

func TestHistoryAt(t *testing.T) {
	const run = "run_a"
	calls := []llm.ToolCall{{ID: "c1", Name: "read"}, {ID: "c2", Name: "write"}}
	events := []agent.Event{
		{Type: agent.EventRunStarted, Run: run, Text: "do it"},
		{Type: agent.EventTurnStarted, Run: run, Turn: 1},
		{Type: agent.EventModelTurn, Run: run, Turn: 1, Text: "calling", Calls: calls},
		{Type: agent.EventToolFinished, Run: run, Turn: 1, Call: &agent.CallInfo{ID: "c2", Tool: "write"}, Result: agent.ErrorResult("denied")},
		{Type: agent.EventNested, Run: run, Nested: &agent.Event{Type: agent.EventRunStarted, Run: "run_b", Text: "nested"}},
		{Type: agent.EventToolFinished, Run: run, Turn: 1, Call: &agent.CallInfo{ID: "c1", Tool: "read"}, Result: agent.TextResult("text")},
		{Type: agent.EventTurnStarted, Run: run, Turn: 2},
		{Type: agent.EventModelTurn, Run: run, Turn: 2, Text: "the answer"},
		{Type: agent.EventFinal, Run: run, Text: "the answer"},
		{Type: agent.EventRunStarted, Run: run, Text: "resumed"}, // a resumed run starts again
	}
	tests := []struct {
		turn     int
		roles    []string
		wantKind failure.Kind
	}{
		{0, nil, 0},
		{1, []string{"user", "assistant", "tool"}, 0},
		{2, []string{"user", "assistant", "tool", "assistant"}, 0},
		{3, nil, failure.InvalidArgs},
	}
	for _, tt := range tests {
		hist, input, err := historyAt(events, run, tt.turn)
		if tt.wantKind != 0 {
			if !errors.Is(err, tt.wantKind) {
				t.Errorf("turn %d: err %v, want %v", tt.turn, err, tt.wantKind)
			}
			continue
		}
		if err != nil || input != "do it" {
			t.Fatalf("turn %d: %v, input %q", tt.turn, err, input)
		}
		var roles []string
		for _, m := range hist {
			roles = append(roles, m.Role)
		}
		if len(roles) != len(tt.roles) {
			t.Fatalf("turn %d: roles %v, want %v", tt.turn, roles, tt.roles)
		}
		for i := range roles {
			if roles[i] != tt.roles[i] {
				t.Fatalf("turn %d: roles %v, want %v", tt.turn, roles, tt.roles)
			}
		}
		if tt.turn >= 1 {
			res := hist[2].ToolResults
			if len(res) != 2 || res[0].CallID != "c1" || res[0].Content != "text" || res[1].CallID != "c2" || !res[1].IsError {
				t.Errorf("turn %d: results %+v, want in call order", tt.turn, res)
			}
		}
	}
	if _, _, err := historyAt(nil, run, 0); !errors.Is(err, failure.NotFound) {
		t.Errorf("no events: %v", err)
	}
}

// FuzzRedactJSON: whatever an event holds, what the page gets is valid
// JSON without the secret's shape.
func FuzzRedactJSON(f *testing.F) {
	f.Add(`{"text":"api_key=abc123 and Bearer abcdefghijkl"}`)
	f.Add(`{"url":"http://x","b":"c:d@e"}`)
	f.Add(`{"token":"sk-abcdefghijklmnopqrstu"}`)
	f.Add(`["plain"]`)
	f.Fuzz(func(t *testing.T, s string) {
		data, err := json.Marshal(map[string]string{"v": s})
		if err != nil {
			return
		}
		out := redactJSON(data)
		if !json.Valid(out) {
			t.Fatalf("redactJSON(%s) = %s: not JSON", data, out)
		}
	})
}

// FuzzEventType: the type peek never panics and agrees with decoding on
// what the bus publishes.
func FuzzEventType(f *testing.F) {
	f.Add([]byte(`{"v":1,"event":{"type":"run_started","run":"r"}}`))
	f.Add([]byte(`{"v":1,"event":{"type":"final"`))
	f.Add([]byte(`"type":"`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = eventType(data)
		ev, err := decodeEvent(data)
		if err == nil && ev.Type != "" && eventType(data) == "" {
			t.Fatalf("decoded type %q, peeked none", ev.Type)
		}
	})
}

// FuzzHistoryAt: whatever events the bus holds for a run, rebuilding its
// history never panics, and every tool call of it has exactly one result.
func FuzzHistoryAt(f *testing.F) {
	f.Add([]byte(`[{"type":"run_started","run":"r","text":"x"},{"type":"model_turn","run":"r","turn":1,"calls":[{"id":"a","name":"t"}]},{"type":"tool_finished","run":"r","turn":1,"call":{"id":"a","tool":"t"}}]`), 1)
	f.Add([]byte(`[{"type":"model_turn","run":"r","turn":3}]`), 2)
	f.Add([]byte(`[{"type":"tool_finished","run":"r"}]`), 0)
	f.Fuzz(func(t *testing.T, data []byte, turn int) {
		var events []agent.Event
		if json.Unmarshal(data, &events) != nil {
			return
		}
		hist, _, err := historyAt(events, "r", turn%8)
		if err != nil {
			return
		}
		for i, m := range hist {
			if len(m.ToolCalls) == 0 {
				continue
			}
			if i+1 >= len(hist) || len(hist[i+1].ToolResults) != len(m.ToolCalls) {
				t.Fatalf("calls of message %d without their results: %+v", i, hist)
			}
		}
	})
}
