package mcp

import (
	"context"
	"encoding/json"
	"maps"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
)

// PassthroughTool is a [Manager]'s tool as its server defines it, for a
// gateway that offers it unchanged: mcp/server does for the Manager of its
// Config.Servers. Every tool of a Manager's [Manager.Toolset] that comes
// from a server is one (the cross-server tools such as mcp_read_result are
// not).
type PassthroughTool interface {
	agent.Tool
	// Definition is the tool as its server listed it, under its own name:
	// title, icons, annotations, input and output schemas and _meta
	// unchanged. The caller must not modify it.
	Definition() *gomcp.Tool
	// CallMCP calls the tool with args (a JSON object) and meta (the
	// request's _meta, passed on but for the progress token, which the
	// Manager sets to bridge progress to ctx's agent call) and returns the
	// server's result unchanged: content, structuredContent and _meta.
	CallMCP(ctx context.Context, args json.RawMessage, meta gomcp.Meta) (*gomcp.CallToolResult, error)
}

var _ PassthroughTool = (*tool)(nil)

// Definition is the tool as its server listed it.
func (t *tool) Definition() *gomcp.Tool { return t.def }

// CallMCP calls the tool and returns its server's result as it is.
func (t *tool) CallMCP(ctx context.Context, args json.RawMessage, meta gomcp.Meta) (*gomcp.CallToolResult, error) {
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	params := &gomcp.CallToolParams{Name: t.orig, Arguments: args}
	if len(meta) > 0 {
		params.Meta = maps.Clone(meta)
		delete(params.Meta, "progressToken")
	}
	return t.s.call(ctx, t.spec.Name, params)
}

// WithSession runs f against the named server's current session through
// the failure policy (retries of transient failures, the server's
// circuit), for what the Manager has no method of its own for: a gateway
// passing a client's resources/read, prompts/get or completion/complete
// on. op names the work in failures ("read resource").
func (m *Manager) WithSession(ctx context.Context, serverName, op string, f func(ctx context.Context, sess *gomcp.ClientSession) error) error {
	return m.do(ctx, serverName, op, f)
}

// ServerCapabilities returns the capabilities the named server declared at
// its last handshake (its extensions among them), or nil when it has not
// connected yet or is unknown.
func (m *Manager) ServerCapabilities(serverName string) *gomcp.ServerCapabilities {
	s, err := m.server(serverName)
	if err != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps
}

// ServerInstructions returns the instructions the named server gave at its
// last handshake (its initialize result's instructions: how to use its
// tools), or "" when it gave none, has not connected yet or is unknown.
// The Manager's [Manager.Toolset] offers them to the agent's tool search
// (agent.Toolset's optional ServerInstructions method), not to the
// system prompt.
func (m *Manager) ServerInstructions(serverName string) string {
	s, err := m.server(serverName)
	if err != nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.instructions
}
