// Package worker runs agent.Runners in other processes over the bus: a
// pipeline step (or any Runner) is served by a pool of workers that share
// the runs in a NATS queue group, and a Pool on the caller's side is itself
// an agent.Runner, so it can be a workflow step, an agent's tool (AsTool) or
// be run with agent.Run. Adding a worker process adds capacity; the
// caller's code does not change.
//
// The worker side:
//
//	a, _ := agent.New(ctx, agent.Config{Name: "summarize", Model: m,
//		Elicitor: worker.Elicitor(nil)}) // questions go back to the caller
//	srv, _ := worker.Serve(ctx, b, a, worker.ServeConfig{MaxConcurrent: 8})
//	<-srv.Done() // stops when ctx ends (or Stop)
//
// The caller's side:
//
//	pool, _ := worker.NewPool(b, "summarize", worker.PoolConfig{})
//	ans, err := agent.Run(ctx, pool, "Summarise notes.txt")
//
// Pool.Stream sends a start request (the input, ctx's deadline, the
// caller's place as agent.Parent, a heartbeat interval) to
// <prefix>.work.<name>; one worker of the queue group acknowledges it (a
// worker at capacity refuses, and the request goes to another) and streams
// the remote run's events back, numbered, with heartbeats in between, until
// its EventFinal or EventRunFailed. Both sides beat: a worker that stops
// answering is lost (a Transient failure: the pool resumes the run from its
// checkpoint when the worker's agent is durable, else runs the input again on
// another worker, under the failure policy), and a worker whose caller
// stops answering cancels the run. Cancelling ctx, or stopping the
// iteration, cancels the remote run; its tool calls still get results in
// its history. Questions the remote agent asks (worker.Elicitor) come back
// to the caller: the tool call the pool runs in, else PoolConfig.Elicitor.
//
// The remote run's failure comes back typed: a *failure.Error with the
// remote Kind, Source, Name and Tool, wrapping ErrRemote, so
// errors.Is(err, failure.Budget) works across processes. Failures of the
// transport (no worker, worker lost, malformed payloads) are Source "bus".
//
// Workers serving a durable agent (one with a run store) also list their runs
// in heartbeats of their own and resume the runs no worker lists any more
// (a worker that died with its caller) and parked runs whose questions
// expired: no run is left behind (ServeConfig.OrphanAfter;
// docs/durability.md, "Orphaned runs").
//
// Subjects and payloads are in docs/bus.md ("Worker pools").
package worker
