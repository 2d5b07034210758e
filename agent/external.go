package agent

import (
	"context"

	"github.com/switchboard-dev/switchboard/internal/callhook"
)

// A tool run outside a run (by mcp/server, for an MCP client) gets a Call
// bound to the functions of a callhook.Call, so CallFromContext works the
// same for it.
func init() { callhook.Bind = bindExternalCall }

func bindExternalCall(ctx context.Context, c callhook.Call) (context.Context, func()) {
	src, _ := c.Source.(Provenance)
	el, _ := c.Elicitor.(Elicitor)
	cs := &callState{ext: &c, closing: make(chan struct{})}
	call := &Call{Run: c.Run, ID: c.ID, Tool: c.Tool, Source: src, state: cs, elicitor: el, grants: &grants{}}
	return context.WithValue(ctx, nestKey{}, call), cs.done
}

// sendExternal delivers a report of an external call to its callhook
// functions (called by send, under cs.mu, while the call has not returned).
func (cs *callState) sendExternal(m callMsg) bool {
	switch {
	case m.progress != nil && cs.ext.Progress != nil:
		cs.ext.Progress(*m.progress)
		return true
	case m.nested != nil && cs.ext.Forward != nil:
		return cs.ext.Forward(*m.nested)
	}
	return false
}
