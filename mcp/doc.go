// Package mcp connects Switchboard agents to MCP servers with the official
// Go SDK (github.com/modelcontextprotocol/go-sdk), adding what the SDK
// leaves to the host.
//
// A Manager owns every server connection: stdio (restarted after a crash
// with backoff; stderr logged; shutdown closes stdin, then SIGTERM, then
// SIGKILL, reaching the whole process group), Streamable HTTP (an expired
// session is re-established), legacy SSE, WebSocket (package wstransport)
// and in-process go-sdk servers (ServerConfig.Server, reconnected over a
// fresh pipe). Stdio and in-process servers are spoken to over the
// Manager's own newline-delimited JSON-RPC connection, whose decoder
// allocates a small fraction of what go-sdk's does. Servers connect concurrently, each within
// its startup timeout; a server that ignores the 2026-07-28 server/discover
// probe is restarted and spoken to with the 2025-11-25 handshake.
//
// Manager.Toolset offers every server's tools to an agent as
// mcp__<server>__<tool> (sanitised, at most 64 characters, collision-free),
// refreshed on notifications/tools/list_changed, plus tools to list and
// read resources, render prompts and read large results in parts. A call
// always sends an arguments object, validates structuredContent against the
// tool's outputSchema (draft-07 or 2020-12), maps content to agent.Result
// parts, reports progress through agent.CallFromContext, and is cancelled
// at the server (notifications/cancelled) on timeout, idle timeout or
// cancellation.
//
// Server-to-client requests are bridged to the host: sampling to an
// agent.Sampler, elicitation (form and URL) to an agent.Elicitor, log
// messages to zerolog and Config.OnLog, resource updates to
// Config.OnResourceUpdated, roots from each server's configuration.
//
// LoadFile reads the `mcpServers` JSON other MCP hosts use (.mcp.json,
// claude_desktop_config.json) unmodified, with ${VAR} and ${VAR:-default}
// expansion. Every failure is a *failure.Error from failure.SourceMCP
// naming the server, handled by the one failure.Policy.
package mcp
