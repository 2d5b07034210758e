package agent

import "github.com/switchboard-dev/switchboard/internal/elicitctx"

// elicitor is who the run asks: the elicitor its context carries (an A2A
// server's task, for a served run: internal/elicitctx), else the agent's
// Config.Elicitor.
func (r *run) elicitor() Elicitor {
	if e, ok := elicitctx.From(r.ctx).(Elicitor); ok && e != nil {
		return e
	}
	return r.a.cfg.Elicitor
}
