// Package agui serves any agent.Runner to AG-UI clients (the agent–user
// interaction protocol of CopilotKit and @ag-ui/client):
//
//	h, err := agui.New(ctx, agui.Config{Runner: myAgent})
//	if err != nil { ... }
//	defer h.Close()
//	http.Handle("/agent", h)
//
// Each POST of a RunAgentInput (JSON, at most Config.MaxBody) answers with
// a text/event-stream of AG-UI events (Mapper says which event becomes
// which). A [Conversational] Runner (an *agent.Agent) continues the
// client's messages, whose last user message is the run's input; the
// client's system and developer messages, context and state reach the
// run's system prompt, and its tools are offered to the model
// (agent.Input). A call of a client tool ends the stream with the call
// pending while the run waits; the client's next RunAgentInput, ending
// with the tool message, streams the rest of the same run. A
// permission ask or an elicitation ends the stream with RUN_FINISHED whose
// outcome is an interrupt while the run waits (up to Config.AnswerTimeout);
// the client's next RunAgentInput, whose resume entry answers the
// interrupt, streams the rest of the same run; a run of a [Resumable]
// Runner (an *agent.Agent with a durable inbox) parked in its inbox
// becomes an interrupt too, answered in the inbox and resumed with
// ResumeStream. A client that goes away
// cancels its run. See docs/agui.md.
package agui
