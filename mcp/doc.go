// Package mcp connects Switchboard agents to MCP servers with the official
// Go SDK (github.com/modelcontextprotocol/go-sdk), adding what the SDK
// leaves to the host:
//
//	cfg, err := mcp.LoadFile(".mcp.json") // the mcpServers JSON of other hosts
//	if err != nil {
//		return err
//	}
//	m, err := mcp.New(ctx, cfg)
//	if err != nil {
//		return err
//	}
//	defer m.Close()
//	a, err := agent.New(ctx, agent.Config{Model: model, Toolsets: []agent.Toolset{m.Toolset()}})
//
// # Guarantees
//
//   - A [Manager] owns every server connection: stdio (restarted after a crash
//     with backoff, stderr logged, shut down by closing stdin, then SIGTERM,
//     then SIGKILL to the whole process group), Streamable HTTP (an expired
//     session is re-established), legacy SSE, WebSocket for ws:// URLs, and
//     in-process go-sdk servers ([ServerConfig].Server). Servers connect
//     concurrently, each within its startup timeout.
//   - [Manager.Toolset] offers every server's tools as mcp__<server>__<tool>
//     (sanitised, at most 64 characters, collision-free), refreshed on
//     notifications/tools/list_changed, plus tools to list and read
//     resources, render prompts and read large results in parts.
//   - A call always sends an arguments object, validates structuredContent
//     against the tool's outputSchema, maps content to [agent.Result] parts,
//     reports progress through [agent.CallFromContext], and is cancelled at
//     the server (notifications/cancelled) on timeout, idle timeout or
//     cancellation.
//   - Server-to-client requests reach the host: sampling an [agent.Sampler],
//     elicitation (form and URL) an [agent.Elicitor], log messages zerolog and
//     [Config].OnLog, resource updates [Config].OnResourceUpdated; roots come
//     from each server's configuration.
//   - [LoadFile] and [ParseConfig] read .mcp.json and claude_desktop_config.json
//     unmodified, with ${VAR} and ${VAR:-default} expansion.
//   - Every failure is a [*failure.Error] from [failure.SourceMCP] naming the
//     server, handled by the one failure policy.
package mcp
