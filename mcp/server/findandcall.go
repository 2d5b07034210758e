package server

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
)

// The two tools of Config.FindAndCall.
const (
	findToolsName = "find_tools"
	callToolName  = "call_tool"
)

// Bounds of find_tools: the default and largest number of tools one query
// answers with, and the most queries one call takes.
const (
	findDefaultLimit = 5
	findMaxLimit     = 50
	findMaxQueries   = 10
)

// findArgs are find_tools' arguments.
type findArgs struct {
	Query   string   `json:"query"`
	Queries []string `json:"queries"`
	Limit   int      `json:"limit"`
}

// foundTool is one tool find_tools answers with.
type foundTool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	InputSchema any    `json:"inputSchema"`
	Why         string `json:"why"`
}

// callArgs are call_tool's arguments.
type callArgs struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// newFindIndex indexes the offered definitions, in name order.
func newFindIndex(defs map[string]*gomcp.Tool) *agent.ToolIndex {
	names := make([]string, 0, len(defs))
	for n := range defs {
		names = append(names, n)
	}
	slices.Sort(names)
	ld := make([]llm.ToolDef, len(names))
	for i, n := range names {
		d := defs[n]
		schema, _ := json.Marshal(d.InputSchema)
		ld[i] = llm.ToolDef{Name: n, Description: d.Description, Schema: schema}
	}
	return agent.NewToolIndex(ld)
}

// offerFindAndCall registers find_tools and call_tool with the go-sdk
// server.
func (s *Server) offerFindAndCall() {
	s.mcp.AddTool(&gomcp.Tool{Name: findToolsName,
		Description: "Finds the tools that can do a task: give what you want to do in words (query, or several queries), " +
			"get the best matching tools with their name, description and input schema. Then call one with " + callToolName + ".",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"query":{"type":"string","description":"what the tool should do"},` +
			`"queries":{"type":"array","items":{"type":"string"},"maxItems":10,"description":"several things to find tools for"},` +
			`"limit":{"type":"integer","minimum":1,"maximum":50,"description":"most tools per query (default 5)"}}}`),
		Annotations: &gomcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(bool)},
	}, s.findTools)
	s.mcp.AddTool(&gomcp.Tool{Name: callToolName,
		Description: "Calls a tool that " + findToolsName + " found, by its name, with arguments matching its input schema.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"name":{"type":"string","description":"the tool's name, as find_tools gave it"},` +
			`"arguments":{"type":"object","description":"the tool's arguments"}},"required":["name"]}`),
	}, s.callNamed)
}

// findTools serves find_tools: each query's best matches, once each, with
// their definitions.
func (s *Server) findTools(ctx context.Context, req *gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
	var a findArgs
	if len(req.Params.Arguments) > 0 {
		if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
			return errorResult(fmt.Sprintf("invalid arguments for %s: %v", findToolsName, err)), nil
		}
	}
	queries := slices.DeleteFunc(append([]string{a.Query}, a.Queries...), func(q string) bool { return strings.TrimSpace(q) == "" })
	switch {
	case len(queries) == 0:
		return errorResult(findToolsName + ": give query (or queries): what the tool should do"), nil
	case len(queries) > findMaxQueries:
		return errorResult(fmt.Sprintf("%s: %d queries; at most %d", findToolsName, len(queries), findMaxQueries)), nil
	case a.Limit < 0 || a.Limit > findMaxLimit:
		return errorResult(fmt.Sprintf("%s: limit %d; want 1 to %d", findToolsName, a.Limit, findMaxLimit)), nil
	}
	if a.Limit == 0 {
		a.Limit = findDefaultLimit
	}
	s.tools.sync(ctx) // the toolsets' current tools (they cache)
	r := s.tools
	r.mu.Lock()
	ix, defs := r.index, r.defs
	var found []foundTool
	seen := map[string]bool{}
	for _, q := range queries {
		for _, m := range ix.Search(q, a.Limit) {
			d, ok := defs[m.Name]
			if !ok || seen[m.Name] {
				continue
			}
			seen[m.Name] = true
			found = append(found, foundTool{Name: m.Name, Description: d.Description, InputSchema: d.InputSchema, Why: m.Why})
		}
	}
	r.mu.Unlock()
	out := struct {
		Tools []foundTool `json:"tools"`
	}{Tools: found}
	if out.Tools == nil {
		out.Tools = []foundTool{}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return errorResult(fmt.Sprintf("%s: %v", findToolsName, err)), nil
	}
	return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}, nil
}

// callNamed serves call_tool: the named tool's tools/call, served as any
// (callTool), so the same permissions, guards, limits, timeout and audit
// apply.
func (s *Server) callNamed(ctx context.Context, req *gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
	if req.Params.RequestState != "" { // a multi round-trip retry: the call it continues is known
		return s.callTool(ctx, req, ""), nil
	}
	var a callArgs
	if len(req.Params.Arguments) > 0 {
		if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
			return errorResult(fmt.Sprintf("invalid arguments for %s: %v", callToolName, err)), nil
		}
	}
	if a.Name == "" {
		return errorResult(callToolName + ": give name, the name of a tool " + findToolsName + " found"), nil
	}
	if string(a.Arguments) == "null" {
		a.Arguments = nil
	}
	params := *req.Params
	params.Name, params.Arguments = a.Name, a.Arguments
	inner := *req
	inner.Params = &params
	return s.callTool(ctx, &inner, a.Name), nil
}
