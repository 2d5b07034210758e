// Package gateway runs a [server.Server] as one of several replicas behind
// a load balancer without session affinity, sharing a NATS server:
//
//	client := new(server.Client) // the callers' person and model, for sources built first
//	m, err := mcp.New(ctx, mcp.Config{Servers: servers, Elicitor: client.Elicitor(), Sampler: client.Sampler()})
//	if err != nil {
//		return err
//	}
//	defer m.Close()
//	srv, err := server.New(ctx, server.Config{Toolsets: []agent.Toolset{m.Toolset()}, Client: client})
//	if err != nil {
//		return err
//	}
//	defer srv.Close()
//	g, err := gateway.New(ctx, srv, gateway.Config{Conn: nc, Replica: "gw-1", Audit: true})
//	if err != nil {
//		return err
//	}
//	defer g.Close()
//	err = http.ListenAndServe(":8080", g.Handler()) // /mcp, /healthz, /readyz
//
// Without [Config].Conn a Gateway is one replica alone: the server's
// endpoint and the health probes.
//
// # Guarantees
//
//   - Stateful sessions stay on the replica that created them (go-sdk
//     keeps a session in the process). That replica records session →
//     replica in the JetStream KV bucket <PREFIX>_MCP_SESSIONS before the
//     client sees the session id (a 2 min TTL, renewed while the session
//     lives, removed when it ends); a request for a session another
//     replica owns is forwarded to the owner over core NATS and its
//     response streamed back frame by frame, so SSE streams, questions to
//     the client and stream resumption work on any replica. A session
//     whose owner is gone is answered 404, the MCP rule for an unknown
//     session: the client initializes again.
//   - A multi round-trip call (protocol revision 2026-07-28) waits on the
//     replica that started it; its requestStates name that replica, and a
//     retry reaching another replica is relayed to it over NATS
//     request-reply (at most 1,000 at once per replica, each bounded by
//     the server's call timeout and 5 s). This works statefully and with
//     a stateless server ([server.Config].Stateless).
//   - With [Config].Audit every tools/call's [server.AuditRecord] is
//     published on the JetStream stream [AuditStream]; a publish waits at
//     most 2 s for its ack and a failure is logged.
//   - /readyz answers 503 while NATS is unreachable and after
//     [Gateway.Drain]; /healthz answers while the process serves.
//   - [New] does the I/O the shared state needs and no other, and
//     [Gateway.Close] stops every goroutine New started; neither closes
//     the server or the NATS connection. docs/gateway.md has the limits.
package gateway
