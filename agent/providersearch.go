package agent

import "github.com/switchboard-dev/switchboard/llm"

// providerSearches reports whether a model's provider has its own tool
// search (llm.Capabilities.ToolSearch): ContextConfig.ProviderSearch.
func providerSearches(m llm.Model) bool { return llm.CapabilitiesOf(m).ToolSearch }

// providerDefs are a turn's tools when the provider searches them: every
// tool, in listing order (the provider's prompt cache keeps working), all
// but the pinned ones marked deferred. A tool the model finds is called
// like any other; it also returns how many tools are deferred.
func (cx *ctxRun) providerDefs(all []llm.ToolDef) ([]llm.ToolDef, int) {
	defs := make([]llm.ToolDef, len(all))
	copy(defs, all)
	n := 0
	for i := range defs {
		if !cx.pinned(defs[i].Name) {
			defs[i].Deferred = true
			n++
		}
	}
	return defs, n
}
