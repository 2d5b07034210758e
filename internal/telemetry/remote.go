package telemetry

import (
	"context"
	"reflect"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// The span kinds of the hops between processes, so that a service graph
// (Tempo's, Jaeger's) pairs a CLIENT with its SERVER and a PRODUCER with
// its CONSUMER.
var (
	startServer   = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}
	startProducer = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindProducer)}
	startConsumer = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer)}
)

// MCPRequest describes one MCP request, made or served, in the MCP
// semantic conventions.
type MCPRequest struct {
	// Method is the JSON-RPC method (mcp.method.name): tools/call,
	// resources/read, prompts/get, ….
	Method string
	// Target is what the request names: the server's own tool name, a
	// resource URI or a prompt name ("" for none). It must come from a
	// bounded set (the server's tools): it is part of the span name.
	Target string
	// Session is the MCP session id (mcp.session.id; "" on stdio).
	Session string
	// Protocol is the negotiated protocol version (mcp.protocol.version).
	Protocol string
	// Address and Port are the server's (server.address, server.port;
	// empty for stdio).
	Address string
	Port    int
	// Transport is network.transport: "pipe" for stdio, "tcp" for HTTP.
	Transport string
	// Unknown marks a tools/call of a tool the server does not have: the
	// span name leaves the name out (it came from the caller).
	Unknown bool
}

// attrs are the request's span attributes.
func (r MCPRequest) attrs(kv []attribute.KeyValue) []attribute.KeyValue {
	switch r.Method {
	case "tools/call":
		kv = append(kv, KeyOperation.String(OpExecuteTool))
	}
	return r.callAttrs(kv)
}

// callAttrs are the attributes an execute_tool span of the MCP tool gets:
// the method, what it names (for a tool, the server's own name), the
// session, protocol, request id and server.
func (r MCPRequest) callAttrs(kv []attribute.KeyValue) []attribute.KeyValue {
	kv = append(kv, KeyMCPMethod.String(r.Method))
	switch r.Method {
	case "tools/call":
		kv = append(kv, KeyToolName.String(r.Target))
	case "resources/read":
		kv = append(kv, KeyMCPResourceURI.String(r.Target))
	case "prompts/get":
		kv = append(kv, KeyGenAIPromptName.String(r.Target))
	}
	if r.Session != "" {
		kv = append(kv, KeyMCPSession.String(r.Session))
	}
	if r.Protocol != "" {
		kv = append(kv, KeyMCPProtocolVersion.String(r.Protocol))
	}
	if r.Address != "" {
		kv = append(kv, KeyServerAddress.String(r.Address))
		if r.Port > 0 {
			kv = append(kv, KeyServerPort.Int(r.Port))
		}
	}
	if r.Transport != "" {
		kv = append(kv, KeyNetworkTransport.String(r.Transport))
	}
	return kv
}

// mcpSpanName is "{mcp.method.name} {target}", the MCP convention.
// Only a tool's name is part of it: URIs and prompt arguments are
// unbounded, and so is a tool name the server does not know.
func mcpSpanName(r MCPRequest) string {
	if r.Method != "tools/call" || r.Unknown {
		return r.Method
	}
	return cachedName(r.Method, r.Target)
}

// StartMCPClient opens the CLIENT span of an MCP request ctx's caller
// makes. When ctx's current span is a run's execute_tool span (an agent
// calling an MCP tool) that span gets the MCP attributes instead and no
// span is made, as the MCP conventions ask; otherwise (a gateway serving
// its own caller) the span is made with the Telemetry ctx carries, else
// the global one. The returned context carries the span to propagate.
func StartMCPClient(ctx context.Context, r MCPRequest) (context.Context, *Op) {
	if o, _ := ctx.Value(opKey{}).(*Op); o != nil && o.op == OpExecuteTool && r.Method == "tools/call" &&
		o.span != nil && trace.SpanFromContext(ctx).SpanContext().Equal(o.span.SpanContext()) {
		if o.rec {
			// On the span itself, not through the Op's buffer: the call may
			// outlive the run's wait for it (a tool that ignores its
			// cancellation), and the span is safe for concurrent use.
			o.span.SetAttributes(r.callAttrs(nil)...)
		}
		return ctx, nil
	}
	t := From(ctx)
	if t == nil || t.tracer == nil {
		return ctx, nil
	}
	ctx, o := t.start(ctx, "", func() string { return mcpSpanName(r) }, startClient, nil, true)
	if o.rec {
		o.set(r.attrs(o.buf))
	}
	return ctx, o
}

// RequestID records the JSON-RPC id of the MCP request being written
// under ctx (jsonrpc.request.id) on the span that traces it: the CLIENT
// span StartMCPClient made, or the execute_tool span that took its place.
func RequestID(ctx context.Context, id string) {
	if s := trace.SpanFromContext(ctx); s.IsRecording() {
		s.SetAttributes(KeyJSONRPCRequestID.String(id))
	}
}

// StartMCPServer opens the SERVER span of an MCP request being served, a
// child of ctx's span (the caller's, continued from the request's _meta or
// HTTP headers). t nil: off.
func (t *Telemetry) StartMCPServer(ctx context.Context, r MCPRequest) (context.Context, *Op) {
	if t == nil || t.tracer == nil {
		return ctx, nil
	}
	ctx, o := t.start(ctx, "", func() string { return mcpSpanName(r) }, startServer, nil, true)
	if o.rec {
		o.set(r.attrs(o.buf))
	}
	return ctx, o
}

// StartA2AServer opens the SERVER span of one request an A2A server
// handles (endpoint: jsonrpc, rest, card), a child of the caller's span.
func (t *Telemetry) StartA2AServer(ctx context.Context, endpoint string) (context.Context, *Op) {
	if t == nil || t.tracer == nil {
		return ctx, nil
	}
	ctx, o := t.start(ctx, "", func() string { return cachedName("a2a", endpoint) }, startServer, nil, false)
	if o.rec {
		o.set(append(o.buf, KeyA2AMethod.String(endpoint)))
	}
	return ctx, o
}

// Messaging describes one message sent or processed over the bus, in the
// messaging conventions.
type Messaging struct {
	// Destination is the bounded name of where the message goes (a worker
	// pool's name, not a subject with ids in it).
	Destination string
	// Group is the consumer group (the pool's queue group; "" for none).
	Group string
}

func (m Messaging) attrs(kv []attribute.KeyValue, op, opType string) []attribute.KeyValue {
	kv = append(kv, KeyMessagingSystem.String("nats"), KeyMessagingOperation.String(op),
		KeyMessagingOpType.String(opType), KeyMessagingDestination.String(m.Destination))
	if m.Group != "" {
		kv = append(kv, KeyMessagingConsumerGrp.String(m.Group))
	}
	return kv
}

// StartProducer opens the PRODUCER span of a message sent over the bus
// ("send {destination}"), with the Telemetry ctx carries, else the global
// one.
func StartProducer(ctx context.Context, m Messaging) (context.Context, *Op) {
	t := From(ctx)
	if t == nil || t.tracer == nil {
		return ctx, nil
	}
	ctx, o := t.start(ctx, "", func() string { return cachedName("send", m.Destination) }, startProducer, nil, false)
	if o.rec {
		o.set(m.attrs(o.buf, "send", "send"))
	}
	return ctx, o
}

// StartConsumer opens the CONSUMER span of a message processed from the
// bus ("process {destination}"), a child of the sender's span that ctx
// continues. t nil: off.
func (t *Telemetry) StartConsumer(ctx context.Context, m Messaging) (context.Context, *Op) {
	if t == nil || t.tracer == nil {
		return ctx, nil
	}
	ctx, o := t.start(ctx, "", func() string { return cachedName("process", m.Destination) }, startConsumer, nil, false)
	if o.rec {
		o.set(m.attrs(o.buf, "process", "process"))
	}
	return ctx, o
}

// Retry adds a retry event (switchboard.retry with the attempt number, 2
// for the first retry) to ctx's span when it records: a component that
// retries on its own (the A2A toolset) says so on the caller's span.
func Retry(ctx context.Context, attempt int, kind string) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	kv := []attribute.KeyValue{KeyAttempt.Int(attempt)}
	if kind != "" {
		kv = append(kv, KeyErrorType.String(kind))
	}
	span.AddEvent(EventRetry, trace.WithAttributes(kv...))
}

// Absent reports whether a request's params are missing: go-sdk hands
// a request without params as a typed nil pointer, whose methods panic.
func Absent(params any) bool {
	v := reflect.ValueOf(params)
	return !v.IsValid() || (v.Kind() == reflect.Pointer && v.IsNil())
}
