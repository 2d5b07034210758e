package mcp

import (
	"github.com/switchboard-dev/switchboard/failure"
)

// pol is the manager's failure policy: Config.Policy, else the process
// default.
func (m *Manager) pol() failure.Policy { return failure.Or(m.cfg.Policy) }
