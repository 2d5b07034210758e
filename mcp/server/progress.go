package server

import (
	"context"
	"fmt"
	"sync"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
)

// progress turns a call's progress reports and its nested run's events
// into notifications/progress for the request's progress token (none
// without one). Progress values must increase: a runner's events count up
// one by one.
type progress struct {
	ss    *gomcp.ServerSession
	token any

	mu   sync.Mutex
	sent bool
	last float64
}

func newProgress(req *gomcp.CallToolRequest) *progress {
	p := &progress{ss: req.Session}
	if req.Params != nil {
		p.token = req.Params.GetProgressToken()
	}
	return p
}

// report sends a tool's own progress report.
func (p *progress) report(ctx context.Context, r agent.Progress) {
	p.send(ctx, r.Progress, r.Total, r.Message)
}

// event sends a nested run's event as a step of progress.
func (p *progress) event(ctx context.Context, ev agent.Event) {
	if ev.Type == agent.EventNested && ev.Nested != nil {
		ev = *ev.Nested
	}
	msg := describe(ev)
	if msg == "" {
		return
	}
	p.send(ctx, -1, 0, msg)
}

// send notifies the client; value -1 means "one more step". Values that
// would not increase are raised past the last one sent.
func (p *progress) send(ctx context.Context, value, total float64, msg string) {
	if p.token == nil || p.ss == nil {
		return
	}
	p.mu.Lock()
	if value < 0 || (p.sent && value <= p.last) {
		value = p.last + 1
	}
	p.sent, p.last = true, value
	p.mu.Unlock()
	// A failed notification (client gone) is not the call's failure.
	_ = p.ss.NotifyProgress(ctx, &gomcp.ProgressNotificationParams{ProgressToken: p.token,
		Progress: value, Total: total, Message: msg})
}

// describe words a run's event for a progress message ("" for events not
// worth one).
func describe(ev agent.Event) string {
	who := ev.Agent
	if who == "" {
		who = "agent"
	}
	switch ev.Type {
	case agent.EventModelTurn:
		return fmt.Sprintf("%s: turn %d", who, ev.Turn)
	case agent.EventToolStarted:
		if ev.Call != nil {
			return fmt.Sprintf("%s: calling %s", who, ev.Call.Tool)
		}
	case agent.EventToolFinished:
		if ev.Call != nil {
			return fmt.Sprintf("%s: %s answered", who, ev.Call.Tool)
		}
	case agent.EventToolProgress:
		if ev.Progress != nil && ev.Progress.Message != "" {
			return fmt.Sprintf("%s: %s", who, ev.Progress.Message)
		}
	case agent.EventStepStarted:
		if ev.Step != nil {
			return fmt.Sprintf("%s: step %s", who, ev.Step.Name)
		}
	case agent.EventFailure:
		if ev.Failure != nil {
			return fmt.Sprintf("%s: %s", who, ev.Failure.Message)
		}
	case agent.EventFinal:
		return fmt.Sprintf("%s: answered", who)
	}
	return ""
}
