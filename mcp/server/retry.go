package server

import (
	"context"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Retry is a client's retry of a multi round-trip tools/call (protocol
// revision 2026-07-28): it continues a call that answered with an
// input-required result and waits, on the Server that started it, for
// the answers. A Server continues its own calls by itself; Retry and
// [Server.Resume] are for what runs several servers as replicas, where a
// retry may reach a replica other than the call's (the gateway relays it
// to that replica, which resumes it).
type Retry struct {
	// Caller is who retries, as the server binds a call to its caller:
	// the token's subject, else the session. Only the caller that made
	// the call may continue it.
	Caller string
	// State is the requestState of the input-required result answered.
	State string
	// Responses are the client's answers to its input requests.
	Responses gomcp.InputResponseMap
}

// RetryOf is the retry req is, and false when req is not one (it carries
// no requestState).
func RetryOf(req *gomcp.CallToolRequest) (Retry, bool) {
	if req == nil || req.Params == nil || req.Params.RequestState == "" {
		return Retry{}, false
	}
	return Retry{Caller: callOwner(req), State: req.Params.RequestState, Responses: req.Params.InputResponses}, true
}

// Resume continues the call of this server waiting under r.State for
// r.Caller with r's answers, and answers with the call's result or its
// next question (an input-required result under a fresh requestState),
// as the retry itself would be answered on this server. A state this
// server does not hold, or that another caller's call holds, is answered
// with an error result. ctx bounds the wait; its end cancels the call.
func (s *Server) Resume(ctx context.Context, r Retry) *gomcp.CallToolResult {
	return s.resumePending(ctx, r.State, r.Caller, r.Responses)
}
