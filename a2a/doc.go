// Package a2a connects Switchboard agents over the A2A protocol (1.0, with
// 0.3 peers through a2a-go's compatibility layer).
//
// As a client, NewToolset turns A2A peers into delegation tools: each peer
// (or each skill it advertises) becomes an agent.Tool whose call sends the
// model's message to the peer, streams the remote task's status and
// artifact updates as tool progress, resumes a dropped stream with
// SubscribeToTask (polling GetTask as the fallback), turns input-required
// and auth-required into elicitations, cancels the remote task when the
// call is cancelled, and returns the task's artifacts as the tool result.
//
// As a server, NewServer serves any agent.Runner (an *agent.Agent, a workflow)
// as an A2A peer over
// JSON-RPC and HTTP+JSON with SSE streaming, on an http.Handler the user
// mounts: runs map onto tasks, tool progress onto status updates, the final
// answer onto an artifact, and an elicitation inside the run onto
// input-required (with ServerConfig.AskClient).
//
// Both sides are built on github.com/a2aproject/a2a-go/v2 and work around
// its known defects (see docs/a2a.md). Every remote operation runs through
// the failure.Policy with the key {a2a, <peer>}.
package a2a
