package agui_test

import (
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/agui"
	"github.com/switchboard-dev/switchboard/failure"
)

func TestMapper(t *testing.T) {
	call := &agent.CallInfo{ID: "c1", Tool: "lookup", Args: []byte(`{"q":"x"}`)}
	sub := func(ev agent.Event) agent.Event {
		ev.Run = "sub1"
		return agent.Event{Type: agent.EventNested, Nested: &ev}
	}
	for _, tc := range []struct {
		name string
		in   []agent.Event
		want string
	}{
		{"text", []agent.Event{{Type: agent.EventModelText, Text: "a"}, {Type: agent.EventModelText, Text: "b"}, {Type: agent.EventModelTurn}},
			"TEXT_MESSAGE_START TEXT_MESSAGE_CONTENT TEXT_MESSAGE_CONTENT TEXT_MESSAGE_END"},
		{"empty text", []agent.Event{{Type: agent.EventModelText}}, ""},
		{"tool call", []agent.Event{{Type: agent.EventToolStarted, Call: call}, {Type: agent.EventToolFinished, Call: call, Result: agent.TextResult("ok")}},
			"TOOL_CALL_START TOOL_CALL_ARGS TOOL_CALL_END TOOL_CALL_RESULT"},
		{"failed call", []agent.Event{{Type: agent.EventToolStarted, Call: call}, {Type: agent.EventFailure, Call: call, Failure: &agent.FailureInfo{Kind: failure.Timeout, Message: "slow"}}},
			"TOOL_CALL_START TOOL_CALL_ARGS TOOL_CALL_END TOOL_CALL_RESULT"},
		{"text then call", []agent.Event{{Type: agent.EventModelText, Text: "let me"}, {Type: agent.EventToolStarted, Call: call}},
			"TEXT_MESSAGE_START TEXT_MESSAGE_CONTENT TEXT_MESSAGE_END TOOL_CALL_START TOOL_CALL_ARGS TOOL_CALL_END"},
		{"reasoning", []agent.Event{{Type: agent.EventModelReasoning, Text: "hm"}},
			"REASONING_START REASONING_MESSAGE_START REASONING_MESSAGE_CONTENT REASONING_MESSAGE_END REASONING_END"},
		{"steps", []agent.Event{{Type: agent.EventStepStarted, Step: &agent.StepInfo{Name: "draft"}}, {Type: agent.EventStepFinished, Step: &agent.StepInfo{Name: "draft"}}},
			"STEP_STARTED STEP_FINISHED"},
		{"unmatched step end", []agent.Event{{Type: agent.EventStepFinished, Step: &agent.StepInfo{Name: "x"}}}, ""},
		{"nested run", []agent.Event{sub(agent.Event{Type: agent.EventRunStarted, Agent: "helper"}), sub(agent.Event{Type: agent.EventModelText, Text: "hi"}), sub(agent.Event{Type: agent.EventFinal, Text: "hi"})},
			"SUBAGENT_STARTED TEXT_MESSAGE_START TEXT_MESSAGE_CONTENT TEXT_MESSAGE_END SUBAGENT_FINISHED"},
		{"nested failure", []agent.Event{sub(agent.Event{Type: agent.EventRunStarted}), sub(agent.Event{Type: agent.EventRunFailed, Failure: &agent.FailureInfo{Kind: failure.Budget, Message: "over"}})},
			"SUBAGENT_STARTED SUBAGENT_ERROR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := agui.NewMapper("t", "r", false)
			var got []string
			for _, ev := range tc.in {
				for _, e := range m.Map(ev) {
					got = append(got, e.Type)
				}
			}
			if s := strings.Join(got, " "); s != tc.want {
				t.Fatalf("got %q, want %q", s, tc.want)
			}
		})
	}
}

// An interrupt inside a step closes the step (RUN_FINISHED may not leave
// one open) and the resumed run reopens it.
func TestMapperInterruptReopensSteps(t *testing.T) {
	m := agui.NewMapper("t", "r1", false)
	m.Map(agent.Event{Type: agent.EventStepStarted, Step: &agent.StepInfo{Name: "draft"}})
	var got []string
	for _, e := range m.Interrupt(agui.Interrupt{ID: "i1", Reason: "tool_approval"}) {
		got = append(got, e.Type)
	}
	for _, e := range m.Start("r2", "r1", nil) {
		got = append(got, e.Type)
	}
	if s := strings.Join(got, " "); s != "STEP_FINISHED RUN_FINISHED RUN_STARTED STEP_STARTED" {
		t.Fatalf("got %q", s)
	}
}
