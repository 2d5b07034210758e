// Package console is Switchboard's web developer console: a page served
// over HTTP that shows the runs on a bus (live, across processes), each
// run's timeline as a tree, tokens, cost and the context window per turn,
// the questions waiting for a person (answered from the browser), a chat
// that starts runs, and forks that re-run a past run from one of its turns
// with a changed input, model or prompt.
//
//	b, _ := bus.New(ctx, bus.Config{})                      // or URLs of a NATS deployment
//	a, _ := agent.New(ctx, agent.Config{Model: m, Events: b, Elicitor: b.Elicitor()})
//	c, _ := console.New(ctx, console.Config{Bus: b, Runner: a})
//	defer c.Close()
//	_ = http.ListenAndServe("127.0.0.1:7070", c.Handler())
//
// `switchboard dev` runs it on the agent of a configuration (docs/console.md).
//
// The console reads what the bus records: the run events in JetStream
// (bus.Bus.SubscribeEvents for a run's page), an index of runs it keeps in
// a stream of its own (so that a page of the runs list costs the same with
// ten runs stored as with thousands, and holds at most [Config.PageSize]
// runs), the questions runs ask over the bus (it answers them, see
// [Config.NoLiveQuestions]) and, with [Config.Inbox], the parked ones. Every
// answer is recorded with who gave it ([AnswerRecord]).
//
// Without [Config.Token] it answers loopback clients only (and refuses a
// Host header that is not a loopback name); with one, every request needs
// it. What it shows goes through the redaction the logs use. Requests that
// change something need the X-Switchboard-Console header, which a page of
// another site cannot send.
//
// The front end is plain HTML, CSS and ES modules embedded in the binary
// (no build step); live updates travel over Server-Sent Events.
package console
