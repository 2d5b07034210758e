package agent_test

import (
	"context"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
)

// TestBindCall: a call bound with BindCall (a tool run by mcp/server for an
// MCP client) has the call context of a run: progress, forwarded
// events and questions reach the bound functions until the call returned,
// and are dropped after.
func TestBindCall(t *testing.T) {
	var progress []agent.Progress
	var events []agent.Event
	var asked []agent.Elicitation
	ctx, done := agent.BindCall(context.Background(), agent.CallBinding{Run: "r1", ID: "c1", Tool: "t",
		Source: agent.Provenance{Kind: failure.SourceTool, Tool: "t"}, IdempotencyKey: "k1",
		Progress: func(p agent.Progress) { progress = append(progress, p) },
		Forward:  func(ev agent.Event) bool { events = append(events, ev); return true },
		Elicitor: agent.ElicitorFunc(func(_ context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
			asked = append(asked, e)
			return agent.ElicitationResult{Action: agent.ElicitAccept}, nil
		})})
	call, ok := agent.CallFromContext(ctx)
	if !ok || call.Run != "r1" || call.ID != "c1" || call.Tool != "t" || call.IdempotencyKey() != "k1" {
		t.Fatalf("CallFromContext: %+v %v", call, ok)
	}
	call.ReportProgress(agent.Progress{Progress: 1, Total: 2})
	if !call.Forward(agent.Event{Type: agent.EventFinal}) {
		t.Error("Forward refused before the call returned")
	}
	res, err := call.Elicit(ctx, agent.Elicitation{Kind: agent.ElicitForm, Message: "ok?"})
	if err != nil || res.Action != agent.ElicitAccept {
		t.Errorf("Elicit: %+v %v", res, err)
	}
	call.Grant("x") // no panic: grants exist
	done()
	call.ReportProgress(agent.Progress{Progress: 2})
	if call.Forward(agent.Event{Type: agent.EventFinal}) {
		t.Error("Forward accepted after the call returned")
	}
	if len(progress) != 1 || len(events) != 1 || len(asked) != 1 || asked[0].Run != "r1" || asked[0].Call != "c1" {
		t.Errorf("progress %v, events %v, asked %+v", progress, events, asked)
	}
}
