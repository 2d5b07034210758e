// Package store keeps what must outlive a process on the JetStream of a
// [bus.Bus]: the sessions, runs and questions of durable agents, and the
// tasks of A2A servers, tools' embedding vectors, shared by every process and replica connected to
// the same NATS server or cluster, and the OAuth logins of MCP clients.
//
//	b, _ := bus.New(ctx, bus.Config{URLs: urls}) // or the embedded server
//	st, _ := store.OpenAgent(ctx, b, store.AgentConfig{Replicas: 3})
//	a, _ := agent.New(ctx, agent.Config{Name: "support", Model: m, Tools: tools,
//		Durable: agent.Durable(st, 30*time.Second)})
//
// Every store of the package is opened the same way: Open<Kind>(ctx, b,
// <Kind>Config), on the bus's connection, JetStream context and failure
// policy, creating its buckets if needed. [OpenAgent] returns an
// [agent.Store]: one KV bucket per kind of record (<Name>_SESSIONS,
// <Name>_RUNS, <Name>_QUESTIONS), one key per record, the latest revision
// kept, a per-key TTL renewed by every write, revision-checked writes
// (failure.Conflict for a stale one), and records over the server's message
// size in an object store (<Name>_BLOBS). It passes the agent/agenttest
// suite. [OpenTasks] returns an A2A server's task store and push config
// store in one KV bucket (give them to a2a.ServerConfig's Store and
// PushStore; package a2a itself links no NATS). [OpenTokens] returns an
// MCP client's OAuth logins, sealed by a [Sealer] (mcp.NewTokenSealer),
// for mcp.Config.TokenStore (this package links no MCP). [OpenVectors]
// returns an [agent.VectorStore]: tools' embedding vectors in an object
// store (<Name>_VECTORS), one object per hash of the embedding model and the
// tool's definition, so replicas and restarts embed each tool once (give it
// to agent.Config.Vectors).
//
// Package bus itself is left with messaging (events, progress,
// request-reply, task updates); the stores live here, beside it, because
// they are the same NATS with another purpose: state, not messages.
//
// docs/durability.md and docs/a2a.md have the layouts, the limits and the
// guarantees. Every
// failure is a *failure.Error of Source "bus".
package store
