// Package policyref holds a source's failure policy: the one its
// configuration gave it, or a default it replaces, once, with the policy of
// the agent it is added to (a method UsePolicy(failure.Policy), which agent.New calls).
package policyref

import (
	"reflect"
	"sync/atomic"

	"github.com/switchboard-dev/switchboard/failure"
)

// Ref is a source's current policy. The zero Ref is not usable; use New.
type Ref struct {
	p        atomic.Pointer[holder]
	explicit bool
	adopted  atomic.Bool
}

type holder struct{ failure.Policy }

// New is a Ref holding given when it is not nil (the source keeps it), else
// fallback, which the first Use replaces.
func New(given, fallback failure.Policy) *Ref {
	r := &Ref{explicit: given != nil}
	if given == nil {
		given = fallback
	}
	r.p.Store(&holder{given})
	return r
}

// Get is the current policy.
func (r *Ref) Get() failure.Policy { return r.p.Load().Policy }

// Use adopts p unless the source was configured with a policy or has
// adopted one already; it reports whether p is now the policy.
func (r *Ref) Use(p failure.Policy) bool {
	if p == nil {
		return false
	}
	if r.explicit || !r.adopted.CompareAndSwap(false, true) {
		return Same(r.Get(), p)
	}
	r.p.Store(&holder{p})
	return true
}

// Same reports whether a and b are the same policy, without panicking on
// policies of a type that == cannot compare.
func Same(a, b failure.Policy) bool {
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta == tb && ta != nil && ta.Comparable() && a == b
}
