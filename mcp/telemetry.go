package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"go.opentelemetry.io/otel/trace"

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

// The JSON-RPC id the SDK gives each request is seen only where it is
// written; the SDK writes a request under the context of its call, which
// traceSending gave the span. jsonrpc.request.id is set there: by idConn on
// the connections that are ours (stdio, in-process pipes), by traceRT on
// HTTP, which also sends the W3C trace context as headers for servers that
// read them rather than _meta. (The SDK's own HTTP connections cannot be
// wrapped: it asks them for methods of its own.)

// tracedMethod reports whether method is one whose span records its id.
func tracedMethod(method string) bool {
	switch method {
	case "tools/call", "resources/read", "prompts/get":
		return true
	}
	return false
}

// idTransport makes connections that report request ids.
type idTransport struct {
	gomcp.Transport
	// onTask is told of the tasks answering tools/call, onNotice of the
	// tasks a notifications/tasks names (taskConn).
	onTask   func(token, task string)
	onNotice func(task string)
}

func (t idTransport) Connect(ctx context.Context) (gomcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return idConn{&taskConn{Connection: c, onTask: t.onTask, onNotice: t.onNotice, calls: map[jsonrpc.ID]string{}}}, nil
}

// taskTransport is a Transport whose connections read task results
// (taskConn).
type taskTransport struct {
	gomcp.Transport
	onTask   func(token, task string)
	onNotice func(task string)
}

func (t taskTransport) Connect(ctx context.Context) (gomcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &taskConn{Connection: c, onTask: t.onTask, onNotice: t.onNotice, calls: map[jsonrpc.ID]string{}}, nil
}

// idConn is a connection of ours that reports the ids of traced requests.
type idConn struct{ gomcp.Connection }

func (c idConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && tracedMethod(req.Method) {
		telemetry.RequestID(ctx, fmt.Sprint(req.ID.Raw()))
	}
	return c.Connection.Write(ctx, msg)
}

// maxIDScan bounds how much of a request body traceRT reads for its id.
const maxIDScan = 1 << 20

// traceRT sends the trace context of each request's context as W3C
// headers and, while its span records, sets the span's jsonrpc.request.id
// from the body.
type traceRT struct{ base http.RoundTripper }

func (t traceRT) RoundTrip(r *http.Request) (*http.Response, error) {
	if !telemetry.Active(r.Context()) {
		return t.base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	telemetry.InjectHTTP(r.Context(), r.Header)
	if r.Method == http.MethodPost && r.GetBody != nil && r.ContentLength > 0 && r.ContentLength <= maxIDScan &&
		trace.SpanFromContext(r.Context()).IsRecording() {
		if body, err := r.GetBody(); err == nil {
			var head struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.NewDecoder(body).Decode(&head) == nil && len(head.ID) > 0 && tracedMethod(head.Method) {
				id := strings.Trim(string(head.ID), `"`)
				telemetry.RequestID(r.Context(), id)
			}
			_ = body.Close()
		}
	}
	return t.base.RoundTrip(r)
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
