package server

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
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

// newFindIndex indexes the offered definitions, in name order: each one's
// name, title (MCP's display name: title, else annotations.title),
// description and input schema, with its server (the offered tool's
// provenance) and that server's instructions as context.
func newFindIndex(offered map[string]agent.Tool, defs map[string]*gomcp.Tool, instructions map[string]string) *agent.ToolIndex {
	names := make([]string, 0, len(defs))
	for n := range defs {
		names = append(names, n)
	}
	slices.Sort(names)
	specs := make([]agent.ToolSpec, len(names))
	for i, n := range names {
		d := defs[n]
		schema, _ := json.Marshal(d.InputSchema)
		specs[i] = agent.ToolSpec{Name: n, Title: d.Title, Description: d.Description, InputSchema: schema}
		if specs[i].Title == "" && d.Annotations != nil {
			specs[i].Title = d.Annotations.Title
		}
		if t, ok := offered[n]; ok {
			specs[i].Source = t.Spec().Source
		}
	}
	return agent.NewToolIndex(specs, instructions)
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

// findTools serves find_tools under the client's rate limit, and records
// the call for the audit hook.
func (s *Server) findTools(ctx context.Context, req *gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
	start := time.Now()
	client := clientID(ctx, req)
	rec := AuditRecord{Time: start, Client: client, Session: sessionID(req), Tool: findToolsName}
	var res *gomcp.CallToolResult
	if !s.limits.allow(client) {
		res, rec.Outcome = errorResult("rate limit exceeded for this client: retry later"), outcomeRateLimited
	} else {
		res, rec.Outcome = s.find(ctx, req)
	}
	rec.Duration, rec.IsError = time.Since(start), res.IsError
	s.cfg.Audit(context.WithoutCancel(ctx), rec)
	return res, nil
}

// find answers find_tools: each query's best matches, once each, with
// their definitions. The search runs as a tool of the server's own
// (runTool: the failure policy's circuit for it, the call timeout, a panic
// recovered), and its failure is handled by the policy like any tool's: a
// *failure.Error its OnFailure sees, the client getting its model text.
// A toolset whose listing fails is searched in its last known tools (sync
// reports the failure to the policy).
func (s *Server) find(ctx context.Context, req *gomcp.CallToolRequest) (*gomcp.CallToolResult, string) {
	queries, limit, err := parseFindArgs(req.Params.Arguments)
	if err != nil {
		return errorResult(err.Error()), outcomeInvalidArgs
	}
	if s.cfg.Logger != nil {
		ctx = s.log.WithContext(ctx) // a policy without a Logger logs here
	}
	spec := agent.ToolSpec{Name: findToolsName, ReadOnly: true}
	search := agent.NewFuncTool(spec, func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
		b, err := s.search(ctx, queries, limit)
		if err != nil {
			return nil, err
		}
		return &agent.Result{Parts: []agent.Part{{Type: agent.PartJSON, JSON: b}}}, nil
	})
	res, _, err := s.runTool(ctx, req, callLink(ctx, req.Session), search, spec, json.RawMessage("{}"))
	if err == nil && (res == nil || len(res.Parts) != 1) {
		err = &failure.Error{Kind: failure.Internal, Source: failure.SourceMCP, Tool: findToolsName, Message: "the search gave no answer"}
	}
	if err != nil {
		fe := failure.From(err)
		if fe.Tool == "" {
			fe.Tool = findToolsName
		}
		failure.Or(s.policy).Handle(ctx, fe)
		return errorResult(fe.ModelText()), outcomeFailed
	}
	b := res.Parts[0].JSON
	return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: string(b)}}, StructuredContent: b}, outcomeOK
}

// search is find_tools' answer to queries: the JSON of each query's best
// limit matches among the offered tools, once each.
func (s *Server) search(ctx context.Context, queries []string, limit int) (json.RawMessage, error) {
	s.tools.sync(ctx) // the toolsets' current tools (they cache)
	r := s.tools
	r.mu.Lock()
	ix, defs := r.index, r.defs
	found := []foundTool{}
	seen := map[string]bool{}
	for _, q := range queries {
		for _, m := range ix.Search(q, limit) {
			d, ok := defs[m.Name]
			if !ok || seen[m.Name] {
				continue
			}
			seen[m.Name] = true
			found = append(found, foundTool{Name: m.Name, Description: d.Description, InputSchema: d.InputSchema, Why: m.Why})
		}
	}
	r.mu.Unlock()
	b, err := json.Marshal(struct {
		Tools []foundTool `json:"tools"`
	}{Tools: found})
	if err != nil {
		return nil, &failure.Error{Kind: failure.Internal, Source: failure.SourceMCP, Tool: findToolsName, Op: "encode", Err: err}
	}
	return b, nil
}

// callNamed serves call_tool: the named tool's tools/call, served as any
// (callTool), so the same permissions, guards, limits, timeout and audit
// apply.
func (s *Server) callNamed(ctx context.Context, req *gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
	if req.Params.RequestState != "" { // a multi round-trip retry: the call it continues is known
		return s.callTool(ctx, req, ""), nil
	}
	name, args, err := parseCallArgs(req.Params.Arguments)
	if err != nil {
		res := errorResult(err.Error())
		s.cfg.Audit(context.WithoutCancel(ctx), AuditRecord{Time: time.Now(), Client: clientID(ctx, req), Session: sessionID(req),
			Tool: callToolName, Outcome: outcomeInvalidArgs, IsError: true})
		return res, nil
	}
	params := *req.Params
	params.Name, params.Arguments = name, args
	inner := *req
	inner.Params = &params
	return s.callTool(ctx, &inner, name), nil
}

// parseFindArgs reads find_tools' arguments: the non-blank queries (at
// least one, at most findMaxQueries) and the limit per query.
func parseFindArgs(raw json.RawMessage) ([]string, int, error) {
	var a findArgs
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, 0, fmt.Errorf("invalid arguments for %s: %v", findToolsName, err)
		}
	}
	queries := slices.DeleteFunc(append([]string{a.Query}, a.Queries...), func(q string) bool { return strings.TrimSpace(q) == "" })
	switch {
	case len(queries) == 0:
		return nil, 0, fmt.Errorf("%s: give query (or queries): what the tool should do", findToolsName)
	case len(queries) > findMaxQueries:
		return nil, 0, fmt.Errorf("%s: %d queries; at most %d", findToolsName, len(queries), findMaxQueries)
	case a.Limit < 0 || a.Limit > findMaxLimit:
		return nil, 0, fmt.Errorf("%s: limit %d; want 1 to %d", findToolsName, a.Limit, findMaxLimit)
	}
	if a.Limit == 0 {
		a.Limit = findDefaultLimit
	}
	return queries, a.Limit, nil
}

// parseCallArgs reads call_tool's arguments: the tool's name (required)
// and its arguments (nil when absent or null).
func parseCallArgs(raw json.RawMessage) (string, json.RawMessage, error) {
	var a callArgs
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &a); err != nil {
			return "", nil, fmt.Errorf("invalid arguments for %s: %v", callToolName, err)
		}
	}
	if a.Name == "" {
		return "", nil, fmt.Errorf("%s: give name, the name of a tool %s found", callToolName, findToolsName)
	}
	if string(a.Arguments) == "null" {
		a.Arguments = nil
	}
	return a.Name, a.Arguments, nil
}
