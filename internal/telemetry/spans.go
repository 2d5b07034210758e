package telemetry

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Op is one instrumented operation: its span (when tracing) and the
// attributes of its metrics. A nil *Op is off and every method is a no-op.
type Op struct {
	t        *Telemetry
	span     trace.Span
	op       string
	start    time.Time
	mattrs   []attribute.KeyValue
	attempts atomic.Int32
}

type opKey struct{}

// start opens an operation; its span (if tracing) is a child of ctx's.
func (t *Telemetry) start(ctx context.Context, op, name string, kind trace.SpanKind, attrs, mattrs []attribute.KeyValue, links ...trace.Link) (context.Context, *Op) {
	o := &Op{t: t, op: op, start: time.Now(), mattrs: mattrs}
	if t.tracer == nil {
		return ctx, o
	}
	// Attributes are set once the span is known to record: an unsampled
	// span costs its start and end only.
	if len(links) > 0 {
		ctx, o.span = t.tracer.Start(ctx, name, trace.WithSpanKind(kind), trace.WithLinks(links...))
	} else {
		ctx, o.span = t.tracer.Start(ctx, name, trace.WithSpanKind(kind))
	}
	if !o.span.IsRecording() {
		return ctx, o
	}
	if len(attrs) > 0 {
		o.span.SetAttributes(attrs...)
	}
	return context.WithValue(ctx, opKey{}, o), o
}

// spanName is "<operation> <name>", or the operation alone without a name.
func spanName(op, name string) string {
	if name == "" {
		return op
	}
	return op + " " + name
}

// provider is the provider attribute of the conventions in use.
func (t *Telemetry) provider(p string) attribute.KeyValue {
	if t.latest {
		return KeyProviderName.String(p)
	}
	return KeySystem.String(p)
}

// ProviderModel splits a model's name ("openai/gpt-4o") into the provider
// and the model; a name without a provider is Switchboard's own.
func ProviderModel(name string) (provider, model string) {
	if p, m, ok := strings.Cut(name, "/"); ok && p != "" && m != "" {
		return p, m
	}
	return "switchboard", name
}

// StartAgent opens an invoke_agent span for one run. link, when valid, is
// the span a resumed run continues.
func (t *Telemetry) StartAgent(ctx context.Context, agentName, run, parentRun, model, input string, link trace.SpanContext) (context.Context, *Op) {
	if t == nil {
		return ctx, nil
	}
	var links []trace.Link
	if link.IsValid() {
		links = append(links, trace.Link{SpanContext: link})
	}
	ctx, o := t.start(ctx, OpInvokeAgent, spanName(OpInvokeAgent, agentName), trace.SpanKindInternal, nil, nil, links...)
	if !o.Recording() {
		return ctx, o
	}
	prov, m := ProviderModel(model)
	o.span.SetAttributes(KeyOperation.String(OpInvokeAgent), t.provider(prov), KeyAgentName.String(agentName),
		KeyRequestModel.String(m), KeyRun.String(run))
	if parentRun != "" {
		o.span.SetAttributes(KeyParentRun.String(parentRun))
	}
	o.content(KeyInputMessages, EventUserMessage, "user", input)
	return ctx, o
}

// StartWorkflow opens an invoke_workflow span.
func (t *Telemetry) StartWorkflow(ctx context.Context, name, run string) (context.Context, *Op) {
	if t == nil {
		return ctx, nil
	}
	attrs := []attribute.KeyValue{KeyOperation.String(OpInvokeWorkflow), KeyRun.String(run)}
	if t.latest {
		attrs = append(attrs, KeyWorkflowName.String(name))
	} else {
		attrs = append(attrs, KeyAgentName.String(name))
	}
	return t.start(ctx, OpInvokeWorkflow, spanName(OpInvokeWorkflow, name), trace.SpanKindInternal, attrs, nil)
}

// StartChat opens a chat span for one model turn.
func (t *Telemetry) StartChat(ctx context.Context, model string) (context.Context, *Op) {
	if t == nil {
		return ctx, nil
	}
	c := t.chat.Load()
	if c == nil || c.model != model {
		prov, m := ProviderModel(model)
		c = &chatNames{model: model, name: spanName(OpChat, m),
			attrs: []attribute.KeyValue{KeyOperation.String(OpChat), t.provider(prov), KeyRequestModel.String(m)}}
		t.chat.Store(c)
	}
	return t.start(ctx, OpChat, c.name, trace.SpanKindClient, c.attrs, c.attrs)
}

// chatNames are the span name and attributes of one model's chat spans,
// computed once.
type chatNames struct {
	model, name string
	attrs       []attribute.KeyValue
}

// StartTool opens an execute_tool span; sourceKind is the tool's
// provenance kind (mcp, skill, a2a, local).
func (t *Telemetry) StartTool(ctx context.Context, tool, callID, sourceKind, sourceName string) (context.Context, *Op) {
	if t == nil {
		return ctx, nil
	}
	if sourceKind == "" {
		sourceKind = "local"
	}
	toolType := "extension"
	if sourceKind == "local" {
		toolType = "function"
	}
	var mattrs []attribute.KeyValue
	if t.m != nil {
		mattrs = []attribute.KeyValue{KeyToolSource.String(sourceKind), KeyToolSourceName.String(sourceName)}
	}
	ctx, o := t.start(ctx, OpExecuteTool, spanName(OpExecuteTool, tool), trace.SpanKindInternal, nil, mattrs)
	if o.Recording() {
		o.span.SetAttributes(KeyOperation.String(OpExecuteTool), KeyToolName.String(tool), KeyToolCallID.String(callID),
			KeyToolType.String(toolType), KeyToolSource.String(sourceKind), KeyToolSourceName.String(sourceName))
	}
	return ctx, o
}

// Attempt marks one attempt of the operation ctx is in: a second or later
// attempt is a retry event.
func Attempt(ctx context.Context) {
	o, _ := ctx.Value(opKey{}).(*Op)
	if o == nil {
		return
	}
	if n := o.attempts.Add(1); n > 1 && o.span != nil {
		o.span.AddEvent(EventRetry, trace.WithAttributes(KeyAttempt.Int(int(n))))
	}
}

// Event adds an event to the operation's span.
func (o *Op) Event(name string, attrs ...attribute.KeyValue) {
	if o == nil || o.span == nil {
		return
	}
	o.span.AddEvent(name, trace.WithAttributes(attrs...))
}

// Recording reports whether the operation's span records.
func (o *Op) Recording() bool { return o != nil && o.span != nil && o.span.IsRecording() }

// SpanContext is the operation's span context (invalid when not tracing).
func (o *Op) SpanContext() trace.SpanContext {
	if o == nil || o.span == nil {
		return trace.SpanContext{}
	}
	return o.span.SpanContext()
}

// Usage records tokens on the span; a chat's also go to the token metric.
func (o *Op) Usage(ctx context.Context, in, out int) {
	if o == nil {
		return
	}
	if o.span != nil {
		o.span.SetAttributes(KeyInputTokens.Int(in), KeyOutputTokens.Int(out))
	}
	if m := o.t.m; m != nil && o.op == OpChat {
		m.tokens.Record(ctx, int64(in), metric.WithAttributes(append(o.mattrs[:len(o.mattrs):len(o.mattrs)], KeyTokenType.String("input"))...))
		m.tokens.Record(ctx, int64(out), metric.WithAttributes(append(o.mattrs[:len(o.mattrs):len(o.mattrs)], KeyTokenType.String("output"))...))
	}
}

// Output records the operation's answer when content is recorded.
func (o *Op) Output(text string) {
	if o == nil {
		return
	}
	o.content(KeyOutputMessages, EventAssistantMessage, "assistant", text)
}

// ToolContent records a tool call's arguments and result when content is
// recorded (latest conventions: attributes; 1.36: none are defined).
func (o *Op) ToolContent(args, result string) {
	if o == nil || o.span == nil || !o.t.content || !o.t.latest {
		return
	}
	o.span.SetAttributes(KeyToolArguments.String(args), KeyToolResult.String(result))
}

// content records a message: an attribute of JSON messages in the latest
// conventions, an event in 1.36.
func (o *Op) content(key attribute.Key, event, role, text string) {
	if o == nil || o.span == nil || !o.t.content || text == "" {
		return
	}
	if o.t.latest {
		b, _ := json.Marshal([]map[string]any{{"role": role, "parts": []map[string]string{{"type": "text", "content": text}}}})
		o.span.SetAttributes(key.String(string(b)))
		return
	}
	o.span.AddEvent(event, trace.WithAttributes(attribute.String("content", text)))
}

// End closes the operation; kind is the failure kind of its error ("" on
// success), recorded as error.type.
func (o *Op) End(ctx context.Context, kind string) {
	if o == nil {
		return
	}
	if o.span != nil {
		if kind != "" {
			o.span.SetAttributes(KeyErrorType.String(kind))
			o.span.SetStatus(codes.Error, kind)
		}
		o.span.End()
	}
	m := o.t.m
	if m == nil {
		return
	}
	d := time.Since(o.start).Seconds()
	switch o.op {
	case OpChat:
		m.opDur.Record(ctx, d, metric.WithAttributes(withError(o.mattrs[:len(o.mattrs):len(o.mattrs)], kind)...))
	case OpExecuteTool:
		set := metric.WithAttributes(withError(o.mattrs[:len(o.mattrs):len(o.mattrs)], kind)...)
		m.toolCalls.Add(ctx, 1, set)
		m.toolDur.Record(ctx, d, set)
	}
}
