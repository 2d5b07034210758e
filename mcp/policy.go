package mcp

import (
	"github.com/switchboard-dev/switchboard/failure"
)

// pol is the policy in use now.
func (m *Manager) pol() failure.Policy { return m.policy.Get() }

// UsePolicy makes p the policy of everything the manager does (tool calls,
// connection attempts and reconnects, background failures) if the manager
// was configured without a Policy and has not been handed one yet; agent.New
// calls it for every toolset of its Config (a method UsePolicy(failure.Policy), which agent.New calls). A
// Config.Policy is kept, and so is the first policy handed over: a later,
// different one is ignored with a debug log line.
func (t *toolset) UsePolicy(p failure.Policy) {
	m := (*Manager)(t)
	if p != nil && !m.policy.Use(p) {
		m.log.Debug().Msg("MCP manager offered a second failure policy; it keeps the one it has")
	}
}

// The manager's toolset takes the agent's policy.
var _ interface{ UsePolicy(failure.Policy) } = (*toolset)(nil)
