// Package runctx is how the runners of this module (agent, agent/workflow,
// bus/worker) nest their runs: fresh run ids, and the place a run started
// under a context is nested in. Package agent owns the context key and
// installs WithParent and ParentFromContext when it is initialised; the
// values are agent.Parent and *agent.Parent (typed any here, because agent
// imports this package).
package runctx

import (
	"context"
	"crypto/rand"
	"strings"
)

// NewRunID returns a fresh run id ("run_" and 16 random characters).
func NewRunID() string { return "run_" + strings.ToLower(rand.Text()[:16]) }

// Hooks package agent installs in its init.
var (
	// WithParent returns a context under which a run started by a runner is
	// nested in p (an agent.Parent): its events carry Parent.
	WithParent func(ctx context.Context, p any) context.Context
	// ParentFromContext returns where a run started under ctx is nested (an
	// *agent.Parent), or nil.
	ParentFromContext func(ctx context.Context) any
)
