// Package server offers Switchboard toolsets and runners to MCP clients, on
// the official Go SDK's server (github.com/modelcontextprotocol/go-sdk),
// over stdio and Streamable HTTP:
//
//	srv, err := server.New(ctx, server.Config{
//		Toolsets: []agent.Toolset{manager.Toolset(), mySkills},
//		Runners:  []agent.Runner{researcher},
//	})
//	if err != nil {
//		return err
//	}
//	defer srv.Close()
//	http.Handle("/mcp", srv.Handler())            // Streamable HTTP
//	err = srv.Run(ctx, &gomcp.StdioTransport{}) // or one stdio session
//
// # Guarantees
//
//   - Every [agent.Toolset] (a [github.com/switchboard-dev/switchboard/mcp.Manager]'s servers, skills, A2A peers,
//     Go tools) and every [agent.Runner] (offered as a tool the way
//     [agent.AsTool] offers it) becomes an MCP tool.
//   - A tool gets the call context a run gives it: its progress reports
//     become notifications/progress, its questions ([agent.Call].Elicit)
//     become elicitation requests to the client, a runner's events become
//     progress notifications, and the client's notifications/cancelled
//     cancels the call.
//   - [Server.Elicitor], [Server.Sampler] and [Server.Model] hand the MCP
//     client's person and model to agents, routed by the request's context
//     or the call's run id. A [Client] does the same before the server
//     exists, for sources built first (give it to [Config].Client).
//   - The permission policy applies when listing (a denied tool is not
//     listed) and when calling (a denied tool is refused; an "ask" is put to
//     the client as an elicitation).
//   - Calls are rate-limited per client, bounded in time, recovered from
//     panics, and each one is recorded for [Config].Audit.
//   - Skills are offered as prompts (their bodies) and their bundled files
//     as resources.
//   - [Server.Handler] serves Streamable HTTP with OAuth 2.1 bearer token
//     checks ([Config].TokenVerifier), DNS-rebinding and cross-origin
//     protection.
//   - A Server is one process. To run it as replicas behind a load
//     balancer without affinity, wrap it in package
//     github.com/switchboard-dev/switchboard/mcp/gateway, which uses
//     [RetryOf], [Server.Resume] and [Server.AddAudit].
package server
