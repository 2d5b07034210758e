package mcp

import (
	"reflect"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/failure"
)

// policyRef holds the manager's current policy, so that it can be swapped
// atomically while calls and background goroutines use it.
type policyRef struct {
	p failure.Policy
	// def marks the default the manager created itself, which an agent's
	// policy replaces.
	def bool
}

// initPolicy sets the policy of Config.Policy, or a default one.
func (m *Manager) initPolicy(p failure.Policy) {
	if p != nil {
		m.ownPol = true
		m.policy.Store(&policyRef{p: p})
		return
	}
	m.policy.Store(&policyRef{p: failure.NewPolicy(failure.PolicyConfig{Logger: &m.log}), def: true})
}

// pol is the policy in use now.
func (m *Manager) pol() failure.Policy { return m.policy.Load().p }

// UsePolicy makes p the policy of everything the manager does (tool calls,
// connection attempts and reconnects, background failures) if the manager
// was configured without a Policy and has not been handed one yet; agent.New
// calls it for every toolset of its Config (agent.PolicyUser). A
// Config.Policy is kept, and so is the first policy handed over: a later,
// different one is ignored with a debug log line.
func (t *toolset) UsePolicy(p failure.Policy) {
	m := (*Manager)(t)
	if p == nil {
		return
	}
	for {
		cur := m.policy.Load()
		if samePolicy(cur.p, p) {
			return
		}
		if !cur.def {
			why := "it keeps the policy it was handed first"
			if m.ownPol {
				why = "it keeps the Policy of its Config"
			}
			m.log.Debug().Msg("MCP manager offered a second failure policy; " + why)
			return
		}
		if m.policy.CompareAndSwap(cur, &policyRef{p: p}) {
			return
		}
	}
}

// samePolicy compares two policies without panicking on policies of an
// uncomparable type.
func samePolicy(a, b failure.Policy) bool {
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta == tb && ta != nil && ta.Comparable() && a == b
}

// The manager's toolset takes the agent's policy.
var _ agent.PolicyUser = (*toolset)(nil)
