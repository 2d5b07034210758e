package server

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxPending bounds the calls waiting for a client's retry at once; a
// question past it is refused (the tool sees an error).
const maxPending = 1000

// inputKey is the id of the one input request of an input-required result.
const inputKey = "q"

// usesMRTR reports whether the session's protocol revision replaces
// server-to-client requests with multi round-trip requests.
func usesMRTR(ss *gomcp.ServerSession) bool {
	ip := ss.InitializeParams()
	return ip != nil && ip.ProtocolVersion >= mrtrVersion
}

// pendingCall is a tools/call of a multi round-trip session whose tool runs
// on a goroutine of its own, so that it can wait for answers across the
// client's retries (which arrive as new requests).
type pendingCall struct {
	s *Server
	// client is who made the call: only the same client may continue it.
	client    string
	questions chan question
	done      chan *gomcp.CallToolResult
	cancel    context.CancelFunc
	// q is the question the last input-required result carried; timer
	// abandons the call when no retry comes.
	q     question
	timer *time.Timer
}

type question struct {
	req    gomcp.InputRequest
	answer chan gomcp.InputResponse
}

// startMRTR starts the call on a goroutine (bounded by its tool timeout and
// by Close) and answers with its result or its first question.
func (s *Server) startMRTR(ctx context.Context, req *gomcp.CallToolRequest, name string) *gomcp.CallToolResult {
	p := &pendingCall{s: s, client: callOwner(req), questions: make(chan question), done: make(chan *gomcp.CallToolResult, 1)}
	bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(s.ctx, cancel)
	p.cancel = cancel
	var caps *gomcp.ClientCapabilities
	if ip := req.Session.InitializeParams(); ip != nil {
		caps = ip.Capabilities
	}
	link := &clientLink{ss: req.Session, caps: caps, ask: p.ask}
	s.wg.Go(func() {
		defer stop()
		defer cancel()
		p.done <- s.serveAudited(bctx, req, name, link)
	})
	return p.wait(ctx)
}

// resumeMRTR delivers a retry's answer to the call waiting under its
// requestState and answers with the call's result or its next question.
func (s *Server) resumeMRTR(ctx context.Context, req *gomcp.CallToolRequest) *gomcp.CallToolResult {
	return s.resumePending(ctx, req.Params.RequestState, callOwner(req), req.Params.InputResponses)
}

// resumePending continues the call waiting under state for owner with the
// retry's answers.
func (s *Server) resumePending(ctx context.Context, state, owner string, responses gomcp.InputResponseMap) *gomcp.CallToolResult {
	v, ok := s.pending.Load(state)
	if !ok || v.(*pendingCall).client != owner || !s.pending.CompareAndDelete(state, v) {
		// Another client's state is as unknown as a made-up one.
		return errorResult("unknown or expired requestState: call the tool again without it")
	}
	s.npending.Add(-1)
	p := v.(*pendingCall)
	p.timer.Stop()
	// A retry without the answer declines the question.
	p.q.answer <- responses[inputKey]
	return p.wait(ctx)
}

// wait answers the request being served: the call's result, or its next
// question as an input-required result under a fresh requestState. The
// client cancelling the request cancels the call.
func (p *pendingCall) wait(ctx context.Context) *gomcp.CallToolResult {
	select {
	case res := <-p.done:
		return res
	case q := <-p.questions:
		return p.park(q)
	case <-ctx.Done():
		p.cancel()
		return errorResult("the call was cancelled")
	}
}

// park keeps the call waiting for the client's retry under a fresh
// requestState (abandoned after CallTimeout) and returns the
// input-required result that asks q.
func (p *pendingCall) park(q question) *gomcp.CallToolResult {
	token := rand.Text()
	p.q = q
	p.timer = time.AfterFunc(p.s.cfg.CallTimeout, func() {
		if p.s.pending.CompareAndDelete(token, p) {
			p.s.npending.Add(-1)
			p.cancel()
		}
	})
	p.s.pending.Store(token, p)
	return &gomcp.CallToolResult{InputRequests: gomcp.InputRequestMap{inputKey: q.req}, RequestState: token}
}

// callOwner is who may continue a call: the token's subject, else the
// session (by id, or by identity on stdio and in-process connections).
// Unauthenticated stateless HTTP requests have no identity: there the
// unguessable requestState (128 random bits), known only to the caller,
// is the only binding.
func callOwner(req *gomcp.CallToolRequest) string {
	id := clientID(context.Background(), req)
	if id == "stdio" {
		return fmt.Sprintf("conn:%p", req.Session)
	}
	return id
}

// errTooManyPending refuses a question past maxPending.
var errTooManyPending = errors.New("too many calls are waiting for their clients' answers")

// ask puts a question to the client through the request being served (or
// the next retry) and waits for the answer.
func (p *pendingCall) ask(ctx context.Context, r gomcp.InputRequest) (gomcp.InputResponse, error) {
	return p.askBy(ctx, r, func(q question) error {
		select {
		case p.questions <- q:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
}

// askBy is ask with the question handed to the client by deliver.
func (p *pendingCall) askBy(ctx context.Context, r gomcp.InputRequest, deliver func(question) error) (gomcp.InputResponse, error) {
	if p.s.npending.Add(1) > maxPending {
		p.s.npending.Add(-1)
		return nil, errTooManyPending
	}
	q := question{req: r, answer: make(chan gomcp.InputResponse, 1)}
	if err := deliver(q); err != nil {
		p.s.npending.Add(-1)
		return nil, err
	}
	select {
	case a := <-q.answer:
		if a == nil {
			if _, ok := r.(*gomcp.ElicitParams); ok {
				return &gomcp.ElicitResult{Action: "decline"}, nil
			}
			return nil, errors.New("the client's retry carried no answer")
		}
		return a, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
