package mcp

import (
	"context"
	"net"
	"net/url"
	"strconv"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/telemetry"
)

// traceSending is the client's sending middleware: every request a server
// is sent carries the W3C trace context of the call's context in
// params._meta (the MCP convention), and tools/call, resources/read and
// prompts/get are traced in the MCP conventions. The context is the
// call's (the caller's run, or the request a gateway serves), never the
// Manager's own.
func (s *server) traceSending(next gomcp.MethodHandler) gomcp.MethodHandler {
	return func(ctx context.Context, method string, req gomcp.Request) (gomcp.Result, error) {
		p := req.GetParams()
		if telemetry.Absent(p) || method == "initialize" || len(method) > 14 && method[:14] == "notifications/" {
			return next(ctx, method, req)
		}
		var op *telemetry.Op
		switch method {
		case "tools/call", "resources/read", "prompts/get":
			ctx, op = telemetry.StartMCPClient(ctx, s.describe(method, req))
		}
		if telemetry.Active(ctx) {
			p.SetMeta(telemetry.InjectMeta(ctx, p.GetMeta()))
		}
		res, err := next(ctx, method, req)
		if op != nil {
			kind := ""
			if err != nil {
				kind = failure.From(err).Kind.String()
			} else if r, ok := res.(*gomcp.CallToolResult); ok && r != nil && r.IsError {
				kind = failure.ToolError.String()
			}
			op.End(ctx, kind)
		}
		return res, err
	}
}

// describe is a request to the server in the MCP conventions.
func (s *server) describe(method string, req gomcp.Request) telemetry.MCPRequest {
	r := telemetry.MCPRequest{Method: method, Transport: "pipe"}
	if s.cfg.URL != "" {
		r.Transport = "tcp"
		if u, err := url.Parse(s.cfg.URL); err == nil {
			r.Address = u.Hostname()
			if port, err := strconv.Atoi(u.Port()); err == nil {
				r.Port = port
			} else if u.Scheme == "https" || u.Scheme == "wss" {
				r.Port = 443
			} else {
				r.Port = 80
			}
			if ip := net.ParseIP(r.Address); ip != nil {
				r.Address = ip.String()
			}
		}
	}
	if cs, ok := req.GetSession().(*gomcp.ClientSession); ok && cs != nil {
		r.Session = cs.ID()
		if ir := cs.InitializeResult(); ir != nil {
			r.Protocol = ir.ProtocolVersion
		}
	}
	switch p := req.GetParams().(type) {
	case *gomcp.CallToolParams:
		r.Target = p.Name // the server's own name for the tool
	case *gomcp.ReadResourceParams:
		r.Target = p.URI
	case *gomcp.GetPromptParams:
		r.Target = p.Name
	}
	return r
}
