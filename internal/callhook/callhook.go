// Package callhook lets a package that serves tools outside an agent run
// (mcp/server, which runs tools for an MCP client) give a tool the same
// call context a run gives it: agent.CallFromContext then reports
// progress, forwards nested events and asks questions through the
// functions given here. Package agent sets Bind when it is initialised;
// the types are agent's, passed as any because agent imports this package.
package callhook

import "context"

// Call describes one tool call made outside a run.
type Call struct {
	// Run and ID name the call (Elicitation.Run and Call).
	Run, ID string
	// Tool is the tool's name; Source its agent.Provenance.
	Tool   string
	Source any
	// Progress receives each agent.Progress the tool reports. It must not
	// block for long: it runs on the tool's goroutine.
	Progress func(p any)
	// Forward receives each agent.Event of a run the tool started
	// (agent.AsTool) and reports whether it was taken.
	Forward func(ev any) bool
	// Elicitor (an agent.Elicitor) answers the tool's questions; nil
	// declines them.
	Elicitor any
}

// Bind returns ctx carrying c as the agent.Call of a tool call, and the
// function to call once the tool returned (later reports are dropped).
// It is nil until package agent is initialised.
var Bind func(ctx context.Context, c Call) (context.Context, func())
