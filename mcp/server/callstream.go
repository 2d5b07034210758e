package server

import (
	"context"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// callLink is the direct link of the tools/call served with call (its
// handler's context): the requests it sends the client go out on that
// call's response stream, whatever context asks. go-sdk's Streamable HTTP
// server picks the stream of a server→client request by the incoming
// request id in the request's context (streamableServerConn.Write); an
// ask from a context that lost the call (an MCP server's elicitation
// arrives on the manager's own goroutines, and finds its call by run id:
// linkFor) has none and goes to the standalone GET stream instead, which a
// client need not open (StreamableClientTransport.DisableStandaloneSSE) or
// may not have opened yet (the TypeScript client opens it after
// initialize, in parallel): "stream not connected or already closed".
func callLink(call context.Context, ss *gomcp.ServerSession) *clientLink {
	l := directLink(ss)
	if l.ask == nil || call == nil {
		return l
	}
	ask := l.ask
	l.ask = func(ctx context.Context, r gomcp.InputRequest) (gomcp.InputResponse, error) {
		ctx, cancel := withCallValues(ctx, call)
		defer cancel()
		return ask(ctx, r)
	}
	// A log message goes out on the call's own response stream.
	l.log = func(ctx context.Context, p *gomcp.LoggingMessageParams) {
		ctx, cancel := withCallValues(ctx, call)
		defer cancel()
		_ = l.ss.Log(ctx, p)
	}
	return l
}

// withCallValues is a context with the values of call and the deadline
// of ctx, cancelled when either ends (a question for a call that ended has
// no stream to go out on).
func withCallValues(ctx, call context.Context) (context.Context, context.CancelFunc) {
	out, cancel := context.WithCancelCause(call)
	stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	var dcancel context.CancelFunc = func() {}
	if d, ok := ctx.Deadline(); ok {
		out, dcancel = context.WithDeadline(out, d)
	}
	return out, func() { dcancel(); stop(); cancel(context.Canceled) }
}
