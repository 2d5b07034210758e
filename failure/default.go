package failure

import "sync/atomic"

// builtin is the process default until SetDefault replaces it.
var builtin = NewPolicy(PolicyConfig{})

// current holds the policy SetDefault installed (nil: builtin).
var current atomic.Pointer[defaultBox]

// defaultBox lets an interface value live behind an atomic pointer.
type defaultBox struct{ p Policy }

// Default returns the process's default policy: the one every component
// (agent, workflow, MCP manager and server, skills toolset, A2A toolset and
// server, bus, worker, model provider) uses when its Config's Policy is nil.
// Until [SetDefault] is called it is NewPolicy(PolicyConfig{}): retries and
// a circuit breaker per source, failures logged to the logger of the
// operation's context (zerolog.Ctx), if any.
//
// Because there is one default, every component built without a policy
// shares it: one OnFailure sees every failure, and one circuit guards each
// source, whichever component calls it.
func Default() Policy {
	if b := current.Load(); b != nil {
		return b.p
	}
	return builtin
}

// SetDefault makes p the process's default policy, as slog.SetDefault does
// for loggers; SetDefault(nil) restores the built-in one. It is safe to call
// at any time, from any goroutine.
//
// It affects every use, not only components built afterwards: a component
// whose Config has a nil Policy asks [Default] for each operation, so
// components built before the call follow the new default from their next
// operation on (an operation already under way finishes under the policy it
// started with). Components given a Policy of their own keep it. Circuit
// state lives in a policy, so the new default starts with every circuit
// closed.
func SetDefault(p Policy) {
	if p == nil {
		current.Store(nil)
		return
	}
	current.Store(&defaultBox{p: p})
}

// Or returns p, or [Default] when p is nil: the rule every Config's Policy
// field follows. Components call it at each use, so that [SetDefault]
// reaches them.
func Or(p Policy) Policy {
	if p != nil {
		return p
	}
	return Default()
}
