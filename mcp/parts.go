package mcp

import (
	"context"

	"github.com/switchboard-dev/switchboard/agent"
)

// Media parts: an image or audio result, a blob resource (embedded in a
// result, or read with mcp_read_resource) and a resource link to an https
// URL reach a model that takes them as parts (agent.Call.Accepts: the
// model accepts the kind, and the part is within the agent's
// Config.MaxPartBytes and the provider's limit). Such parts are never
// saved to files and do not count toward SaveResultsOver; the rest of the
// result is spilled as before when it is over that size.

// fitResult returns res as the model gets it: as it is when it is at most
// SaveResultsOver bytes, counting only the parts the call's model does not
// take as parts; otherwise those parts saved to files (spill) and the
// pointer result followed by the media parts kept.
func (m *Manager) fitResult(ctx context.Context, tool string, res *agent.Result) (*agent.Result, error) {
	if resultBytes(res) <= m.cfg.SaveResultsOver {
		return res, nil
	}
	call, _ := agent.CallFromContext(ctx)
	rest := &agent.Result{IsError: res.IsError, Source: res.Source}
	var media []agent.Part
	for _, p := range res.Parts {
		if mp, ok := p.ModelPart(); ok && call.Accepts(mp.Kind, len(mp.Data)) {
			media = append(media, p)
			continue
		}
		rest.Parts = append(rest.Parts, p)
	}
	if len(media) > 0 && resultBytes(rest) <= m.cfg.SaveResultsOver {
		return res, nil
	}
	out, err := m.results.spill(tool, rest)
	if err != nil {
		return nil, err
	}
	out.Parts = append(out.Parts, media...)
	return out, nil
}
