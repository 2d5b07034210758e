package server

import (
	"context"
	"strings"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/telemetry"
)

// traced is the receiving middleware that continues the caller's trace on
// every request served, over stdio and Streamable HTTP: the W3C trace
// context of the request's params._meta (the MCP convention), else of its
// HTTP headers. With tracing on (Config.Telemetry's tracer provider) the
// request is a SERVER span in the MCP conventions, a child of the caller's
// span; the tool the request reaches, and whatever it calls downstream
// (an MCP server behind a gateway gets the context in its own _meta), run
// in that context.
func (s *Server) traced(next gomcp.MethodHandler) gomcp.MethodHandler {
	return func(ctx context.Context, method string, req gomcp.Request) (gomcp.Result, error) {
		if strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		ctx = continueTrace(ctx, req)
		t := s.tel.Get()
		if t == nil {
			return next(ctx, method, req)
		}
		ctx = telemetry.With(ctx, t)
		if !t.Tracing() {
			return next(ctx, method, req)
		}
		ctx, op := t.StartMCPServer(ctx, s.describe(method, req))
		res, err := next(ctx, method, req)
		op.End(ctx, resultKind(res, err))
		return res, err
	}
}

// continueTrace is ctx continuing the trace context req carries.
func continueTrace(ctx context.Context, req gomcp.Request) context.Context {
	if p := req.GetParams(); !telemetry.Absent(p) {
		if meta := p.GetMeta(); len(meta) > 0 {
			if _, ok := meta["traceparent"]; ok {
				return telemetry.ExtractMeta(ctx, meta)
			}
		}
	}
	if ex := req.GetExtra(); ex != nil && ex.Header != nil && telemetry.HasHTTP(ex.Header) {
		return telemetry.ExtractHTTP(ctx, ex.Header)
	}
	return ctx
}

// describe is the served request in the MCP conventions.
func (s *Server) describe(method string, req gomcp.Request) telemetry.MCPRequest {
	r := telemetry.MCPRequest{Method: method, Transport: "pipe"}
	if ex := req.GetExtra(); ex != nil && ex.Header != nil {
		r.Transport = "tcp"
	}
	if ss, ok := req.GetSession().(*gomcp.ServerSession); ok && ss != nil {
		r.Session = ss.ID()
		if ip := ss.InitializeParams(); ip != nil {
			r.Protocol = ip.ProtocolVersion
		}
	}
	if telemetry.Absent(req.GetParams()) {
		return r
	}
	switch p := req.GetParams().(type) {
	case *gomcp.CallToolParamsRaw:
		r.Target = p.Name
		_, known := s.tools.lookup(p.Name)
		r.Unknown = !known // (or one added to the go-sdk server directly)
	case *gomcp.ReadResourceParams:
		r.Target = p.URI
	case *gomcp.GetPromptParams:
		r.Target = p.Name
	}
	return r
}

// resultKind is the error.type of a served request's outcome ("" for
// success): a tool's error result is a tool_error.
func resultKind(res gomcp.Result, err error) string {
	if err != nil {
		return failure.From(err).Kind.String()
	}
	if r, ok := res.(*gomcp.CallToolResult); ok && r != nil && r.IsError {
		return failure.ToolError.String()
	}
	return ""
}
