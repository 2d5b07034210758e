package server

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/mcp"
)

// mrtrVersion is the first protocol revision in which a server may not
// send requests to the client while serving one (multi round-trip
// requests replace them).
const mrtrVersion = "2026-07-28"

// linkKey is the context key of the client link of a call being served.
type linkKey struct{}

func withLink(ctx context.Context, l *clientLink) context.Context {
	if l == nil {
		return ctx
	}
	return context.WithValue(ctx, linkKey{}, l)
}

// clientLink is how a call asks its MCP client: by sending it requests
// (protocol revisions before 2026-07-28), or by answering the call with an
// input-required result and waiting for the retry (mrtr.go).
type clientLink struct {
	ss   *gomcp.ServerSession
	caps *gomcp.ClientCapabilities
	ask  func(ctx context.Context, r gomcp.InputRequest) (gomcp.InputResponse, error)
	// log sends a log message to the client (nil: it cannot be sent).
	log func(ctx context.Context, p *gomcp.LoggingMessageParams)
}

// directLink asks by sending requests on ss.
func directLink(ss *gomcp.ServerSession) *clientLink {
	l := &clientLink{ss: ss}
	if ss == nil {
		return l
	}
	if ip := ss.InitializeParams(); ip != nil && ip.ProtocolVersion < mrtrVersion {
		l.caps = ip.Capabilities
	}
	l.ask = func(ctx context.Context, r gomcp.InputRequest) (gomcp.InputResponse, error) {
		switch r := r.(type) {
		case *gomcp.ElicitParams:
			return ss.Elicit(ctx, r)
		case *gomcp.CreateMessageParams:
			return ss.CreateMessage(ctx, r)
		}
		return nil, fmt.Errorf("unsupported request %T", r)
	}
	l.log = func(ctx context.Context, p *gomcp.LoggingMessageParams) { _ = ss.Log(ctx, p) }
	return l
}

func (l *clientLink) canElicit() bool {
	return l != nil && l.ask != nil && l.caps != nil && l.caps.Elicitation != nil
}

func (l *clientLink) canSample() bool {
	return l != nil && l.ask != nil && l.caps != nil && l.caps.Sampling != nil
}

func (l *clientLink) elicit(ctx context.Context, p *gomcp.ElicitParams) (*gomcp.ElicitResult, error) {
	r, err := l.ask(ctx, p)
	if err != nil {
		return nil, err
	}
	res, ok := r.(*gomcp.ElicitResult)
	if !ok || res == nil {
		return nil, fmt.Errorf("the client answered an elicitation with %T", r)
	}
	return res, nil
}

// sample asks the client's model; the answer's text and model.
func (l *clientLink) sample(ctx context.Context, p *gomcp.CreateMessageParams) (text, model, stop string, err error) {
	r, err := l.ask(ctx, p)
	if err != nil {
		return "", "", "", err
	}
	switch res := r.(type) {
	case *gomcp.CreateMessageResult:
		if tc, ok := res.Content.(*gomcp.TextContent); ok {
			text = tc.Text
		}
		return text, res.Model, res.StopReason, nil
	case *gomcp.CreateMessageWithToolsResult:
		for _, c := range res.Content {
			if tc, ok := c.(*gomcp.TextContent); ok {
				text += tc.Text
			}
		}
		return text, res.Model, res.StopReason, nil
	}
	return "", "", "", fmt.Errorf("the client answered a sampling request with %T", r)
}

// Client reaches the MCP client of the call being served: the person
// behind it ([Client.Elicitor]) and its model ([Client.Sampler],
// [Client.Model]). It finds the call through the asking context, or
// through the call's run id for sources that lose the context on the way
// (the requests of an mcp.Manager's servers arrive on the Manager's own
// goroutines).
//
// A Client exists apart from the [Server] so that sources built before
// the server can be given its Elicitor and Sampler:
//
//	client := new(server.Client)
//	m, err := mcp.New(ctx, mcp.Config{Servers: servers, Elicitor: client.Elicitor(), Sampler: client.Sampler()})
//	...
//	srv, err := server.New(ctx, server.Config{Toolsets: []agent.Toolset{m.Toolset()}, Client: client})
//
// The zero Client is ready to use; it must not be copied after first use.
// Give one Client to one Server ([Config].Client): a Client no server
// serves with finds no call, and answers as outside a call.
type Client struct {
	// inflight maps the run id of each call being served to its link.
	inflight sync.Map
	// srv is the server the Client was given to (nil before).
	srv atomic.Pointer[Server]
}

// Log passes a log message of one of the servers of [Config].Servers
// (the Manager's OnLog) on to the MCP client of the call it was sent
// during, else to every client; each client gets the messages at or above
// the level it set (logging/setLevel). Before the server exists it drops
// the message.
func (c *Client) Log(ctx context.Context, msg mcp.LogMessage) {
	s := c.srv.Load()
	if s == nil {
		return
	}
	p := &gomcp.LoggingMessageParams{Level: gomcp.LoggingLevel(msg.Level), Logger: msg.Logger, Data: msg.Data}
	if p.Logger == "" && s.fronted != nil && s.fronted.prefix {
		p.Logger = msg.Server
	}
	if v, ok := c.inflight.Load(msg.Run); ok && msg.Run != "" {
		if l := v.(*clientLink); l.log != nil {
			l.log(ctx, p)
			return
		}
	}
	for ss := range s.mcp.Sessions() {
		_ = ss.Log(ctx, p)
	}
}

// ResourceUpdated passes a resources/updated notification of one of the
// servers of [Config].Servers (the Manager's OnResourceUpdated) on to the
// clients subscribed to uri.
func (c *Client) ResourceUpdated(ctx context.Context, server, uri string) {
	if s := c.srv.Load(); s != nil {
		_ = s.mcp.ResourceUpdated(ctx, &gomcp.ResourceUpdatedNotificationParams{URI: uri})
	}
}

// linkFor finds the client link a question or sampling request belongs
// to: the one in ctx, else the one serving the call of run (the run id of
// the request, or of the call in ctx).
func (c *Client) linkFor(ctx context.Context, run string) *clientLink {
	if l, ok := ctx.Value(linkKey{}).(*clientLink); ok {
		return l
	}
	if run == "" {
		if call, ok := agent.CallFromContext(ctx); ok {
			run = call.Run
		}
	}
	if v, ok := c.inflight.Load(run); ok {
		return v.(*clientLink)
	}
	return nil
}

// sessionID is the call's MCP session id ("" on stdio).
func sessionID(req *gomcp.CallToolRequest) string {
	if req == nil || req.Session == nil {
		return ""
	}
	return req.Session.ID()
}

// clientID names the caller for rate limits, audit and continuing a
// multi round-trip call: the token's subject when the request was
// authenticated, else its session; unauthenticated stateless HTTP requests
// are all "http" (one rate-limit bucket), stdio is "stdio".
func clientID(_ context.Context, req *gomcp.CallToolRequest) string {
	if req.Extra != nil && req.Extra.TokenInfo != nil && req.Extra.TokenInfo.UserID != "" {
		return "sub:" + req.Extra.TokenInfo.UserID
	}
	if id := sessionID(req); id != "" {
		return "session:" + id
	}
	if req.Extra != nil && req.Extra.Header != nil {
		return "http"
	}
	return clientStdio
}

// clientStdio is the client of a stream connection (stdio).
const clientStdio = "stdio"

// Elicitor returns the [Client.Elicitor] of the server's [Config].Client
// (or of its own Client): it asks the person behind the MCP client of the
// call being served. Give it to the agents offered as Runners
// (agent.Config.Elicitor) so their permission asks reach the client;
// tools' own questions ([agent.Call].Elicit) reach it without
// configuration.
func (s *Server) Elicitor() agent.Elicitor { return s.client.Elicitor() }

// Elicitor returns an [agent.Elicitor] that asks the person behind the MCP
// client of the call being served (found in ctx, or by the question's run
// id) with an elicitation request. Outside a call, or with a client that
// cannot be asked, the answer is a decline.
func (c *Client) Elicitor() agent.Elicitor {
	return agent.ElicitorFunc(func(ctx context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
		link := c.linkFor(ctx, e.Run)
		if !link.canElicit() {
			return agent.ElicitationResult{Action: agent.ElicitDecline,
				Reason: "the MCP client cannot be asked (no elicitation capability, or a protocol revision without server requests)"}, nil
		}
		params := &gomcp.ElicitParams{Message: e.Message}
		switch e.Kind {
		case agent.ElicitURL:
			params.Mode, params.URL, params.ElicitationID = "url", e.URL, e.ID
		default:
			params.Mode = "form"
			params.RequestedSchema = formSchema(e)
			if e.Kind == agent.ElicitPermission && e.Tool != "" {
				params.Message = fmt.Sprintf("%s\n(tool %s, arguments %s)", e.Message, e.Tool, truncate(string(e.Args), 2000))
			}
		}
		res, err := link.elicit(ctx, params)
		if err != nil {
			return agent.ElicitationResult{}, &failure.Error{Kind: failure.KindOf(err), Source: failure.SourceMCP,
				Name: "client", Op: "elicit", Message: "asking the MCP client's user failed", Err: err}
		}
		return agent.ElicitationResult{Action: agent.ElicitAction(res.Action), Content: res.Content}, nil
	})
}

// formSchema is the requested schema of a form elicitation: the
// question's own, or for free-text input one string, "text".
func formSchema(e agent.Elicitation) json.RawMessage {
	if len(e.Schema) > 0 && json.Valid(e.Schema) {
		return e.Schema
	}
	if e.Kind == agent.ElicitInput {
		return json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)
	}
	return json.RawMessage(`{"type":"object","properties":{}}`)
}

// Sampler returns the [Client.Sampler] of the server's [Config].Client:
// the model of the MCP client of the call being served, for the agents
// and MCP managers behind the server whose sampling the client's model
// should answer.
func (s *Server) Sampler() agent.Sampler { return s.client.Sampler() }

// Sampler returns an [agent.Sampler] served by the model of the MCP client
// of the call being served (sampling/createMessage). Outside a call, or
// with a client without the sampling capability, it fails with
// failure.Unavailable.
func (c *Client) Sampler() agent.Sampler {
	return samplerFunc(func(ctx context.Context, req agent.SamplingRequest) (agent.SamplingResult, error) {
		link := c.linkFor(ctx, req.Run)
		if link == nil {
			return agent.SamplingResult{}, failure.New(failure.Unavailable, failure.SourceMCP, "no MCP client is being served here to sample from")
		}
		if !link.canSample() {
			return agent.SamplingResult{}, failure.New(failure.Unavailable, failure.SourceMCP, "the MCP client offers no sampling")
		}
		params := &gomcp.CreateMessageParams{SystemPrompt: req.System, MaxTokens: int64(req.MaxTokens),
			StopSequences: req.StopSequences}
		if params.MaxTokens <= 0 {
			params.MaxTokens = 1024
		}
		if req.Temperature != nil {
			params.Temperature = *req.Temperature
		}
		for _, m := range req.Messages {
			role := gomcp.Role("user")
			if m.Role == llm.RoleAssistant {
				role = "assistant"
			}
			params.Messages = append(params.Messages, &gomcp.SamplingMessage{Role: role,
				Content: &gomcp.TextContent{Text: messageText(m)}})
		}
		text, model, stop, err := link.sample(ctx, params)
		if err != nil {
			return agent.SamplingResult{}, &failure.Error{Kind: failure.KindOf(err), Source: failure.SourceMCP,
				Name: "client", Op: "sample", Message: "the MCP client's model failed to answer", Err: err}
		}
		return agent.SamplingResult{Model: model, Text: text, StopReason: stop}, nil
	})
}

// Model returns the [Client.Model] of the server's [Config].Client.
func (s *Server) Model() llm.Model { return s.client.Model() }

// Model returns an [llm.Model] answered by the MCP client's model through
// [Client.Sampler]: an agent offered as a Runner and built on it thinks
// with the model of whoever calls it. It is text only: the request's tools
// are not offered (sampling with tools is left out), so give such an agent
// no tools it must call.
func (c *Client) Model() llm.Model { return clientModel{c.Sampler()} }

type clientModel struct{ sampler agent.Sampler }

// samplerFunc adapts a function to agent.Sampler.
type samplerFunc func(ctx context.Context, req agent.SamplingRequest) (agent.SamplingResult, error)

func (f samplerFunc) Sample(ctx context.Context, req agent.SamplingRequest) (agent.SamplingResult, error) {
	return f(ctx, req)
}

func (clientModel) Name() string { return "mcp-client (sampling)" }

func (m clientModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	sreq := agent.SamplingRequest{System: req.System, Messages: req.Messages, MaxTokens: req.MaxTokens,
		Temperature: req.Temperature, StopSequences: req.StopSequences}
	if call, ok := agent.CallFromContext(ctx); ok {
		sreq.Run = call.Run
	}
	res, err := m.sampler.Sample(ctx, sreq)
	if err != nil {
		return nil, err
	}
	if req.OnText != nil {
		req.OnText(res.Text)
	}
	return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Text: res.Text}, StopReason: res.StopReason}, nil
}

// messageText flattens a message for sampling: its text, then its tool
// results' text.
func messageText(m llm.Message) string {
	text := m.Text
	for _, r := range m.ToolResults {
		if text != "" {
			text += "\n"
		}
		text += r.Content
	}
	return text
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
