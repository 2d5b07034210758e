package anthropic

import (
	"encoding/json"
	"strings"

	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/wire"
)

// Anthropic's tool search (a server tool): the tools marked defer_loading
// are not in the model's context until its search finds them; the search
// and its results come back as server_tool_use and tool_search_tool_result
// blocks, which go back with the conversation so that the tools found stay
// loaded.
const (
	toolSearchType = "tool_search_tool_bm25_20251119"
	toolSearchName = "tool_search_tool_bm25"
	toolSearchBeta = "advanced-tool-use-2025-11-20"
)

// anthropicTools builds the request's tool definitions, in the agent's
// order (stable, for the provider's prompt cache): with any tool deferred,
// the tool search tool first and every deferred tool marked defer_loading,
// except a deferred tool the conversation calls with no search result of
// the conversation naming it (its reference went with compacted turns),
// which is defined outright so that the call stays valid.
func anthropicTools(req *llm.Request) []anthropicTool {
	if len(req.Tools) == 0 {
		return nil
	}
	search := wire.UsesToolSearch(req.Tools)
	out := make([]anthropicTool, 0, len(req.Tools)+1)
	var keep map[string]bool
	if search {
		out = append(out, anthropicTool{Type: toolSearchType, Name: toolSearchName})
		keep = unreferencedCalls(req.Messages)
	}
	for _, d := range req.Tools {
		out = append(out, anthropicTool{Name: d.Name, Description: d.Description, InputSchema: wire.ToolSchema(d.Schema),
			DeferLoading: search && d.Deferred && !keep[d.Name]})
	}
	return out
}

// unreferencedCalls returns the names of the tools the conversation calls
// that no tool search result in it names.
func unreferencedCalls(msgs []llm.Message) map[string]bool {
	called, found := map[string]bool{}, map[string]bool{}
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			called[c.Name] = true
		}
		for _, b := range providerBlocks(m.Provider) {
			var c struct {
				References []struct {
					Name string `json:"tool_name"`
				} `json:"tool_references"`
			}
			if b.Type == "tool_search_tool_result" && json.Unmarshal(b.Content, &c) == nil {
				for _, r := range c.References {
					found[r.Name] = true
				}
			}
		}
	}
	for n := range found {
		delete(called, n)
	}
	return called
}

// isProviderBlock reports whether an answer's block goes back with the
// conversation as it came: a server tool's use and its result
// ("tool_result" is ours, sent in user turns), and thinking blocks
// (signed: thinking.go).
func isProviderBlock(typ string) bool {
	return typ == "server_tool_use" || (strings.HasSuffix(typ, "_tool_result") && typ != "tool_result") || isThinking(typ)
}

// providerBlocks decodes a message's Provider blocks; what is not a JSON
// array of blocks (another provider's, or damaged) is dropped.
func providerBlocks(raw json.RawMessage) []anthropicBlock {
	if len(raw) == 0 {
		return nil
	}
	var raws []json.RawMessage
	if json.Unmarshal(raw, &raws) != nil {
		return nil
	}
	out := make([]anthropicBlock, 0, len(raws))
	for _, r := range raws {
		var b anthropicBlock
		if json.Unmarshal(r, &b) == nil && isProviderBlock(b.Type) {
			b.raw = r
			out = append(out, b)
		}
	}
	return out
}
