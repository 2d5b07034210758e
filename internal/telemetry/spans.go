package telemetry

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Op is one instrumented operation: its span (when tracing) and the
// attributes of its metrics. A nil *Op is off and every method is a no-op.
type Op struct {
	t        *Telemetry
	span     trace.Span
	rec      bool // span records: attributes and events are built only then
	op       string
	start    time.Time   // for the metrics (zero without them)
	ms       *metricSets // the metrics' attributes (nil without metrics)
	usage    bool        // tok is set: it goes on the span at End
	tok      Tokens
	cost     float64 // dollars, when costSet
	costSet  bool
	attempts atomic.Int32
	buf      []attribute.KeyValue // a recording span's attributes, handed over one call at a time
}

// recOp and wideOp are the Op of a recording span with room for the
// attributes it hands to the span in one call (the span copies them), so
// that building a span's attributes allocates nothing of its own: three
// (a workflow's) or ten (a tool call's, a run's, a chat's at its end, with
// every token class and the cost).
// Each also holds the context that carries the Op (opCtx), so that a
// recording span's Op and context are one allocation.
type (
	recOp struct {
		Op
		c  opCtx
		kv [3]attribute.KeyValue
	}
	wideOp struct {
		Op
		c  opCtx
		kv [10]attribute.KeyValue
	}
)

type opKey struct{}

// opCtx is a context carrying an Op under opKey (what context.WithValue
// would make, without its own allocation).
type opCtx struct {
	context.Context
	op *Op
}

// Value implements context.Context.
func (c *opCtx) Value(key any) any {
	if _, ok := key.(opKey); ok {
		return c.op
	}
	return c.Context.Value(key)
}

// The start options of each span kind, made once: a variadic option list
// built at each start escapes to the heap.
var (
	startInternal = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}
	startClient   = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
)

// start opens an operation; its span (if tracing) is a child of ctx's.
// opts are the span's start options (startInternal, startClient, or
// those with a link); attributes are added by the caller once the span is
// known to record (o.rec), so an unsampled span costs its start and end.
//
// name is called only when there is a tracer: an operation with metrics
// alone does not look its span name up.
func (t *Telemetry) start(ctx context.Context, op string, name func() string, opts []trace.SpanStartOption, ms *metricSets, wide bool) (context.Context, *Op) {
	var start time.Time
	if t.m != nil {
		start = time.Now()
	}
	if t.tracer == nil {
		return ctx, &Op{t: t, op: op, start: start, ms: ms}
	}
	ctx, span := t.tracer.Start(ctx, name(), opts...)
	if !span.IsRecording() {
		return ctx, &Op{t: t, span: span, op: op, start: start, ms: ms}
	}
	var p *Op
	var c *opCtx
	if wide {
		w := &wideOp{}
		p, c, w.buf = &w.Op, &w.c, w.kv[:0]
	} else {
		r := &recOp{}
		p, c, r.buf = &r.Op, &r.c, r.kv[:0]
	}
	p.t, p.span, p.rec, p.op, p.start, p.ms = t, span, true, op, start, ms
	c.Context, c.op = ctx, p
	return c, p
}

// set hands attrs (built in o.buf) to the span and empties the buffer.
func (o *Op) set(attrs []attribute.KeyValue) {
	o.span.SetAttributes(attrs...)
	clear(attrs)
	o.buf = attrs[:0]
}

// spanName is "<operation> <name>", or the operation alone without a name.
func spanName(op, name string) string {
	if name == "" {
		return op
	}
	return op + " " + name
}

// cachedName's cache holds at most nameCacheMax names of at most
// nameCacheLen bytes each (tool names come from the model; MCP caps them
// at 128 characters).
const (
	nameCacheMax = 1024
	nameCacheLen = 128
)

// names caches the span names of cachedName.
var names = struct {
	sync.RWMutex
	m map[[2]string]string
}{m: map[[2]string]string{}}

// cachedName is spanName(op, name), made once per pair (up to
// nameCacheMax pairs, then each time).
func cachedName(op, name string) string {
	if len(name) > nameCacheLen {
		return spanName(op, name)
	}
	k := [2]string{op, name}
	names.RLock()
	n, ok := names.m[k]
	names.RUnlock()
	if ok {
		return n
	}
	n = spanName(op, name)
	names.Lock()
	if len(names.m) < nameCacheMax {
		names.m[k] = n
	}
	names.Unlock()
	return n
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
	opts := startInternal
	if link.IsValid() {
		opts = []trace.SpanStartOption{startInternal[0], trace.WithLinks(trace.Link{SpanContext: link})}
	}
	ctx, o := t.start(ctx, OpInvokeAgent, func() string { return cachedName(OpInvokeAgent, agentName) }, opts, nil, true)
	if !o.rec {
		return ctx, o
	}
	prov, m := ProviderModel(model)
	kv := append(o.buf, KeyOperation.String(OpInvokeAgent), t.provider(prov), KeyAgentName.String(agentName),
		KeyRequestModel.String(m), KeyRun.String(run))
	if parentRun != "" {
		kv = append(kv, KeyParentRun.String(parentRun))
	}
	o.set(kv)
	o.content(KeyInputMessages, EventUserMessage, "user", input)
	return ctx, o
}

// StartWorkflow opens an invoke_workflow span.
func (t *Telemetry) StartWorkflow(ctx context.Context, name, run string) (context.Context, *Op) {
	if t == nil {
		return ctx, nil
	}
	ctx, o := t.start(ctx, OpInvokeWorkflow, func() string { return cachedName(OpInvokeWorkflow, name) }, startInternal, nil, false)
	if o.rec {
		nameKey := KeyAgentName
		if t.latest {
			nameKey = KeyWorkflowName
		}
		o.set(append(o.buf, KeyOperation.String(OpInvokeWorkflow), KeyRun.String(run), nameKey.String(name)))
	}
	return ctx, o
}

// StartChat opens a chat span for one model turn; endpoint is the
// provider's base URL ("" unknown), reported as server.address and
// server.port.
func (t *Telemetry) StartChat(ctx context.Context, model, endpoint string) (context.Context, *Op) {
	if t == nil {
		return ctx, nil
	}
	c := t.chat.Load()
	if c == nil || c.model != model || c.endpoint != endpoint {
		prov, m := ProviderModel(model)
		attrs := append([]attribute.KeyValue{KeyOperation.String(OpChat), t.provider(prov), KeyRequestModel.String(m)}, serverAttrs(endpoint)...)
		c = &chatNames{model: model, endpoint: endpoint, name: spanName(OpChat, m),
			opts: []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...)}}
		if t.m != nil {
			c.ms = newMetricSets(attrs, true)
		}
		t.chat.Store(c)
	}
	// The required attributes are start options (made once per model), so
	// that a head sampler sees them; the rest go on at End in one call.
	ctx, o := t.start(ctx, OpChat, func() string { return c.name }, c.opts, c.ms, true)
	return ctx, o
}

// Request records a chat's request parameters (gen_ai.request.max_tokens
// when positive, gen_ai.request.temperature when set).
func (o *Op) Request(maxTokens int, temperature *float64) {
	if o == nil || !o.rec || (maxTokens <= 0 && temperature == nil) {
		return
	}
	kv := o.buf
	if maxTokens > 0 {
		kv = append(kv, KeyMaxTokens.Int(maxTokens))
	}
	if temperature != nil {
		kv = append(kv, KeyTemperature.Float64(*temperature))
	}
	o.set(kv)
}

// Response records what a chat's answer says of itself: the model that
// answered, the answer's id and why it stopped (each when known).
func (o *Op) Response(model, id, finishReason string) {
	if o == nil || !o.rec {
		return
	}
	kv := o.buf
	if model != "" {
		kv = append(kv, KeyResponseModel.String(model))
	}
	if id != "" {
		kv = append(kv, KeyResponseID.String(id))
	}
	if finishReason != "" {
		kv = append(kv, KeyFinishReasons.StringSlice([]string{finishReason}))
	}
	if len(kv) > 0 {
		o.set(kv)
	}
}

// Conversation records the session a run belongs to
// (gen_ai.conversation.id).
func (o *Op) Conversation(id string) {
	if o == nil || !o.rec || id == "" {
		return
	}
	o.set(append(o.buf, KeyConversationID.String(id)))
}

// chatNames are the span name and attributes of one model's chat spans,
// computed once.
type chatNames struct {
	model, name string
	endpoint    string
	opts        []trace.SpanStartOption // the span kind and attributes
	ms          *metricSets             // nil without metrics
}

// StartTool opens an execute_tool span; sourceKind is the tool's
// provenance kind (mcp, skills, a2a, tool, ...).
func (t *Telemetry) StartTool(ctx context.Context, tool, callID, sourceKind, sourceName string) (context.Context, *Op) {
	if t == nil {
		return ctx, nil
	}
	if sourceKind == "" {
		sourceKind = "tool"
	}
	toolType := "extension"
	if sourceKind == "tool" {
		toolType = "function"
	}
	var ms *metricSets
	if t.m != nil {
		ms = toolMetricSets(sourceKind, sourceName)
	}
	// A call to another process (an MCP server, an A2A peer) is a CLIENT
	// span, so that a service graph pairs it with the peer's SERVER span.
	opts := startInternal
	if sourceKind == "mcp" || sourceKind == "a2a" {
		opts = startClient
	}
	ctx, o := t.start(ctx, OpExecuteTool, func() string { return cachedName(OpExecuteTool, tool) }, opts, ms, true)
	if o.rec {
		o.set(append(o.buf, KeyOperation.String(OpExecuteTool), KeyToolName.String(tool), KeyToolCallID.String(callID),
			KeyToolType.String(toolType), KeyToolSource.String(sourceKind), KeyToolSourceName.String(sourceName)))
	}
	return ctx, o
}

// StartUnknownTool opens the execute_tool span of a call to a tool that
// does not exist: its span name is [UnknownToolSpan] whatever the model
// sent (the name is the gen_ai.tool.name attribute, cut to 128 bytes).
func (t *Telemetry) StartUnknownTool(ctx context.Context, tool, callID string) (context.Context, *Op) {
	if t == nil {
		return ctx, nil
	}
	var ms *metricSets
	if t.m != nil {
		ms = toolMetricSets("unknown", "")
	}
	ctx, o := t.start(ctx, OpExecuteTool, func() string { return UnknownToolSpan }, startInternal, ms, true)
	if o.rec {
		if len(tool) > nameCacheLen {
			tool = strings.ToValidUTF8(tool[:nameCacheLen], "") // a cut rune is dropped
		}
		o.set(append(o.buf, KeyOperation.String(OpExecuteTool), KeyToolName.String(tool), KeyToolCallID.String(callID)))
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
	if n := o.attempts.Add(1); n > 1 && o.rec {
		o.span.AddEvent(EventRetry, trace.WithAttributes(KeyAttempt.Int(int(n))))
	}
}

// Event adds an event with one string attribute (key=value) to the
// operation's span; nothing is built when the span does not record.
func (o *Op) Event(name string, key attribute.Key, value string) {
	if o == nil || !o.rec {
		return
	}
	o.span.AddEvent(name, trace.WithAttributes(key.String(value)))
}

// Recording reports whether the operation's span records.
func (o *Op) Recording() bool { return o != nil && o.rec }

// SpanContext is the operation's span context (invalid when not tracing).
func (o *Op) SpanContext() trace.SpanContext {
	if o == nil || o.span == nil {
		return trace.SpanContext{}
	}
	return o.span.SpanContext()
}

// Tokens is an operation's token usage by class, in llm.Usage's
// convention: Input counts every input token (the cache classes
// included) and Output every output token (reasoning included).
type Tokens struct {
	Input, Output, CacheRead, CacheWrite, Reasoning int
}

// Usage records tokens on the span (at End, with the error: the input and
// output counts always, each other class when not zero); a chat's input
// and output also go to the token metric.
func (o *Op) Usage(ctx context.Context, tok Tokens) {
	if o == nil {
		return
	}
	o.usage, o.tok = true, tok
	if m := o.t.m; m != nil && o.op == OpChat {
		m.tokens.Record(ctx, int64(tok.Input), o.ms.in...)
		m.tokens.Record(ctx, int64(tok.Output), o.ms.out...)
	}
}

// Cost records what the operation cost, in dollars, when it is known
// (KeyCost on the span at End; a chat's also add to MetricCost).
func (o *Op) Cost(ctx context.Context, dollars float64) {
	if o == nil {
		return
	}
	o.cost, o.costSet = dollars, true
	if m := o.t.m; m != nil && o.op == OpChat {
		m.cost.Add(ctx, dollars, o.ms.add...)
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
	if o == nil || !o.rec || !o.t.content || !o.t.latest {
		return
	}
	o.set(append(o.buf, KeyToolArguments.String(args), KeyToolResult.String(result)))
}

// content records a message: an attribute of JSON messages in the latest
// conventions, an event in 1.36.
func (o *Op) content(key attribute.Key, event, role, text string) {
	if o == nil || !o.rec || !o.t.content || text == "" {
		return
	}
	if o.t.latest {
		b, _ := json.Marshal([]map[string]any{{"role": role, "parts": []map[string]string{{"type": "text", "content": text}}}})
		o.set(append(o.buf, key.String(string(b))))
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
	if o.rec {
		kv := o.buf
		if o.usage {
			kv = append(kv, KeyInputTokens.Int(o.tok.Input), KeyOutputTokens.Int(o.tok.Output))
			if o.tok.CacheRead > 0 {
				kv = append(kv, KeyCacheReadTokens.Int(o.tok.CacheRead))
			}
			if o.tok.CacheWrite > 0 {
				kv = append(kv, KeyCacheWriteTokens.Int(o.tok.CacheWrite))
			}
			if o.tok.Reasoning > 0 {
				kv = append(kv, KeyReasoningTokens.Int(o.tok.Reasoning))
			}
		}
		if o.costSet {
			kv = append(kv, KeyCost.Float64(o.cost))
		}
		switch kind {
		case "":
		case KindParked:
			// A run waiting for a person is not an error: its status stays
			// unset, the wait an event and an attribute.
			kv = append(kv, KeyParked.Bool(true))
			o.span.AddEvent(EventParked)
		default:
			kv = append(kv, KeyErrorType.String(kind))
			o.span.SetStatus(codes.Error, kind)
		}
		if len(kv) > 0 {
			o.set(kv)
		}
	}
	if o.span != nil {
		o.span.End()
	}
	m := o.t.m
	if m == nil {
		return
	}
	d := time.Since(o.start).Seconds()
	switch o.op {
	case OpChat:
		if kind == "" {
			m.opDur.Record(ctx, d, o.ms.rec...)
		} else {
			m.opDur.Record(ctx, d, o.ms.ended(kind))
		}
	case OpExecuteTool:
		if kind == "" {
			m.toolCalls.Add(ctx, 1, o.ms.add...)
			m.toolDur.Record(ctx, d, o.ms.rec...)
		} else {
			set := o.ms.ended(kind)
			m.toolCalls.Add(ctx, 1, set)
			m.toolDur.Record(ctx, d, set)
		}
	}
}

// serverAttrs are server.address and server.port of a provider's base URL
// ("https://api.openai.com/v1", or a bare "host:port"): none when it has
// no host; the port is the scheme's when the URL names none.
func serverAttrs(endpoint string) []attribute.KeyValue {
	if endpoint == "" {
		return nil
	}
	if !strings.Contains(endpoint, "://") {
		endpoint = "//" + endpoint // a bare host[:port]
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Hostname() == "" {
		return nil
	}
	attrs := []attribute.KeyValue{KeyServerAddress.String(u.Hostname())}
	port := u.Port()
	if port == "" {
		switch u.Scheme {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	if n, err := strconv.Atoi(port); err == nil && n > 0 && n < 65536 {
		attrs = append(attrs, KeyServerPort.Int(n))
	}
	return attrs
}
