package mcp

import (
	"strconv"

	"github.com/switchboard-dev/switchboard/agent"
)

// modelToolName returns the name the model sees for tool of server:
// mcp__<server>__<tool>, as agent.ToolName makes it (sanitised, at most 64
// characters).
func modelToolName(server, tool string) string { return agent.ToolName("mcp", server, tool) }

// namer assigns collision-free names in a stable order.
type namer struct{ used map[string]bool }

// name is the model name of tool of server, or, when a tool listed before
// took that name (two names that sanitise alike), the name with a number
// added ("__2", "__3", ...).
func (n *namer) name(server, tool string) string {
	if n.used == nil {
		n.used = map[string]bool{}
	}
	name := modelToolName(server, tool)
	for i := 2; n.used[name]; i++ {
		name = agent.ToolName("mcp", server, tool, strconv.Itoa(i))
	}
	n.used[name] = true
	return name
}
