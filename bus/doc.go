// Package bus is Switchboard's NATS bus: run events, progress, sampling and
// elicitation callbacks, and A2A task updates travel over it, between
// goroutines of one binary or between processes and machines.
//
// New with an empty URL list starts an embedded nats-server in-process
// (JetStream on, store in a temporary directory), so a single binary needs
// nothing installed; it can also listen on a loopback port so other
// processes can join. Given URLs, the same code connects to an external
// server or cluster, with reconnects and a reconnect buffer.
//
// Every payload is versioned JSON ("v":1); the subject scheme and the
// payloads are documented in docs/bus.md. Subjects under the prefix
// (default "switchboard"):
//
//	<prefix>.events.<run>       run events (JetStream: replayable)
//	<prefix>.progress.<run>     progress of calls and remote tasks (JetStream)
//	<prefix>.sampling           sampling requests (request-reply, queue group)
//	<prefix>.elicit.<run>       questions for a person (request-reply, queue group)
//	<prefix>.a2a.tasks.<task>   A2A task status and artifact updates (JetStream)
//
// The Bus implements agent.EventSink (Emit never blocks: a bounded buffer,
// drops reported through the failure policy); Bus.Elicitor and Bus.Sampler
// return agent.Elicitor and agent.Sampler that send requests over the bus;
// [Bus.ServeElicitation] and [Bus.ServeSampling] answer them with nats.go micro
// services that share the load in a queue group; [NewModelSampler] and
// [ElicitHandlers] are the default in-process responders.
//
// Every failure is a *failure.Error of Source "bus": no responder is
// Unavailable, a deadline is Timeout, a malformed or wrong-version payload
// is Protocol, a lost connection is Transient (reconnecting) or Unavailable
// (closed).
package bus
