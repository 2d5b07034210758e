package agui

import (
	"context"
	"encoding/json"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
)

// clientTool is a tool of RunAgentInput.tools, which the client runs: its
// call registers with the run, wakes the stream (which ends the AG-UI run
// with the call pending) and waits for the client's next RunAgentInput to
// bring its tool message.
type clientTool struct {
	spec agent.ToolSpec
	h    *Handler
	run  *liveRun
}

// clientResult is the client's tool message for one call.
type clientResult struct {
	text    string
	isError bool
}

// clientSource names the provenance of client tools.
const clientSource = "agui-client"

func newClientTool(h *Handler, run *liveRun, t Tool) *clientTool {
	schema := t.Parameters
	if len(schema) == 0 || string(schema) == "null" {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	return &clientTool{h: h, run: run, spec: agent.ToolSpec{
		Name: t.Name, Description: t.Description, InputSchema: schema,
		Source: agent.Provenance{Kind: failure.SourceTool, Name: clientSource, Tool: t.Name},
		// The call is handed to the application, where the person is: it
		// changes nothing here, and the application decides whether to
		// ask before it runs the tool (Permissions rules still apply).
		ReadOnly: true,
		// The wait is bounded by Config.AnswerTimeout, which cancels the
		// run; this keeps Config.ToolTimeout from cutting it first.
		Timeout: 2*h.cfg.AnswerTimeout + time.Minute,
	}}
}

func (t *clientTool) Spec() agent.ToolSpec { return t.spec }

func (t *clientTool) Call(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
	c, ok := agent.CallFromContext(ctx)
	if !ok || c.ID == "" {
		return nil, failure.New(failure.Internal, failure.SourceAgent, "agui: a client tool was called outside a run's tool call")
	}
	reply := make(chan clientResult, 1)
	t.h.mu.Lock()
	t.run.calls[c.ID] = reply
	t.h.mu.Unlock()
	defer func() {
		t.h.mu.Lock()
		delete(t.run.calls, c.ID)
		t.h.mu.Unlock()
	}()
	select {
	case t.run.awaits <- struct{}{}:
	default: // the stream is already woken
	}
	select {
	case r := <-reply:
		if r.isError {
			return &agent.Result{Parts: []agent.Part{{Type: agent.PartText, Text: r.text}}, IsError: true}, nil
		}
		return agent.TextResult(r.text), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
