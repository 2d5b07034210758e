package telemetry

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

var temperature = 0.5

// spanOps runs one operation of each kind, as the agent and the workflow
// do: a run with a parent run, a chat with usage that fails, a tool call
// with a permission event, and a workflow.
var spanOps = map[string]func(*Telemetry){
	"invoke_agent": func(t *Telemetry) {
		ctx, op := t.StartAgent(context.Background(), "helper", "r1", "r0", "openai/gpt-4o", "hi", trace.SpanContext{})
		op.Usage(ctx, Tokens{Input: 3, Output: 4})
		op.Output("bye")
		op.End(ctx, "budget")
	},
	"chat": func(t *Telemetry) {
		ctx, op := t.StartChat(context.Background(), "openai/gpt-4o", "https://api.openai.com/v1")
		Attempt(ctx)
		Attempt(ctx)
		op.Request(256, &temperature)
		op.Usage(ctx, Tokens{Input: 5, Output: 6, CacheRead: 3, CacheWrite: 1, Reasoning: 2})
		op.Cost(ctx, 0.25)
		op.Response("gpt-4o-2024-08-06", "chatcmpl-1", "stop")
		op.End(ctx, "transient")
	},
	"parked": func(t *Telemetry) {
		ctx, op := t.StartAgent(context.Background(), "helper", "r1", "", "openai/gpt-4o", "hi", trace.SpanContext{})
		op.Conversation("s1")
		op.End(ctx, KindParked)
	},
	"unknown_tool": func(t *Telemetry) {
		ctx, op := t.StartUnknownTool(context.Background(), "made_up_"+strings.Repeat("x", 200), "c9")
		op.End(ctx, "unknown_tool")
	},
	"local_tool": func(t *Telemetry) {
		ctx, op := t.StartTool(context.Background(), "add", "c1", "", "")
		op.End(ctx, "")
	},
	"mcp_served": func(t *Telemetry) {
		ctx, op := t.StartMCPServer(context.Background(), MCPRequest{Method: "tools/call", Target: "read_file",
			Session: "sess1", Protocol: "2025-06-18", Transport: "tcp"})
		op.End(ctx, "tool_error")
	},
	"mcp_served_unknown": func(t *Telemetry) {
		ctx, op := t.StartMCPServer(context.Background(), MCPRequest{Method: "tools/call", Target: "nope", Unknown: true, Transport: "pipe"})
		op.End(ctx, "")
	},
	"mcp_call": func(t *Telemetry) {
		ctx, op := StartMCPClient(With(context.Background(), t), MCPRequest{Method: "resources/read", Target: "file:///a",
			Address: "127.0.0.1", Port: 8080, Transport: "tcp"})
		op.End(ctx, "")
	},
	"mcp_tool_call": func(t *Telemetry) { // an agent's MCP tool call: its execute_tool span gets the MCP attributes
		ctx, op := t.StartTool(context.Background(), "mcp__files__read", "c1", "mcp", "files")
		cctx, none := StartMCPClient(ctx, MCPRequest{Method: "tools/call", Target: "read", Session: "s2", Protocol: "2025-06-18", Transport: "pipe"})
		if none != nil || cctx != ctx {
			panic("a span was made inside the execute_tool span")
		}
		op.End(ctx, "")
	},
	"a2a_served": func(t *Telemetry) {
		ctx, op := t.StartA2AServer(context.Background(), "jsonrpc")
		op.End(ctx, "")
	},
	"bus_send": func(t *Telemetry) {
		ctx, op := StartProducer(With(context.Background(), t), Messaging{Destination: "step"})
		op.End(ctx, "")
	},
	"bus_process": func(t *Telemetry) {
		ctx, op := t.StartConsumer(context.Background(), Messaging{Destination: "step", Group: "step"})
		Retry(ctx, 2, "transient")
		op.End(ctx, "")
	},
	"execute_tool": func(t *Telemetry) {
		ctx, op := t.StartTool(context.Background(), "add", "c1", "mcp", "files")
		op.Event(EventPermission, KeyPermission, "ask")
		op.ToolContent(`{"a":1}`, "2")
		op.End(ctx, "")
	},
	"invoke_workflow": func(t *Telemetry) {
		ctx, op := t.StartWorkflow(context.Background(), "pipeline", "w1")
		op.End(ctx, "")
	},
}

// TestRecordedSpanAttributes pins everything a recorded span carries (name,
// kind, attributes with their values, status, events), for both sets of
// conventions, with and without content: the allocation cuts of the
// sampled path must not change it.
func TestRecordedSpanAttributes(t *testing.T) {
	for _, tc := range []struct {
		latest, content bool
		want            map[string]string
	}{
		{false, false, map[string]string{
			"invoke_agent":       "invoke_agent helper internal Error:budget [error.type=budget gen_ai.agent.name=helper gen_ai.operation.name=invoke_agent gen_ai.request.model=gpt-4o gen_ai.system=openai gen_ai.usage.input_tokens=3 gen_ai.usage.output_tokens=4 switchboard.run.id=r1 switchboard.run.parent=r0] []",
			"chat":               `chat gpt-4o client Error:transient [error.type=transient gen_ai.operation.name=chat gen_ai.request.max_tokens=256 gen_ai.request.model=gpt-4o gen_ai.request.temperature=0.5 gen_ai.response.finish_reasons=["stop"] gen_ai.response.id=chatcmpl-1 gen_ai.response.model=gpt-4o-2024-08-06 gen_ai.system=openai gen_ai.usage.cache_creation.input_tokens=1 gen_ai.usage.cache_read.input_tokens=3 gen_ai.usage.input_tokens=5 gen_ai.usage.output_tokens=6 gen_ai.usage.reasoning.output_tokens=2 server.address=api.openai.com server.port=443 switchboard.usage.cost=0.25] [switchboard.retry{switchboard.attempt=2}]`,
			"execute_tool":       "execute_tool add client Unset: [gen_ai.operation.name=execute_tool gen_ai.tool.call.id=c1 gen_ai.tool.name=add gen_ai.tool.type=extension switchboard.tool.source=mcp switchboard.tool.source_name=files] [switchboard.permission{switchboard.permission=ask}]",
			"invoke_workflow":    "invoke_workflow pipeline internal Unset: [gen_ai.agent.name=pipeline gen_ai.operation.name=invoke_workflow switchboard.run.id=w1] []",
			"parked":             "invoke_agent helper internal Unset: [gen_ai.agent.name=helper gen_ai.conversation.id=s1 gen_ai.operation.name=invoke_agent gen_ai.request.model=gpt-4o gen_ai.system=openai switchboard.run.id=r1 switchboard.run.parked=true] [switchboard.parked{}]",
			"unknown_tool":       "execute_tool unknown_tool internal Error:unknown_tool [error.type=unknown_tool gen_ai.operation.name=execute_tool gen_ai.tool.call.id=c9 gen_ai.tool.name=made_up_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx] []",
			"local_tool":         "execute_tool add internal Unset: [gen_ai.operation.name=execute_tool gen_ai.tool.call.id=c1 gen_ai.tool.name=add gen_ai.tool.type=function switchboard.tool.source=tool switchboard.tool.source_name=] []",
			"mcp_served":         "tools/call read_file server Error:tool_error [error.type=tool_error gen_ai.operation.name=execute_tool gen_ai.tool.name=read_file mcp.method.name=tools/call mcp.protocol.version=2025-06-18 mcp.session.id=sess1 network.transport=tcp] []",
			"mcp_served_unknown": "tools/call server Unset: [gen_ai.operation.name=execute_tool gen_ai.tool.name=nope mcp.method.name=tools/call network.transport=pipe] []",
			"mcp_call":           "resources/read client Unset: [mcp.method.name=resources/read mcp.resource.uri=file:///a network.transport=tcp server.address=127.0.0.1 server.port=8080] []",
			"mcp_tool_call":      "execute_tool mcp__files__read client Unset: [gen_ai.operation.name=execute_tool gen_ai.tool.call.id=c1 gen_ai.tool.name=read gen_ai.tool.type=extension mcp.method.name=tools/call mcp.protocol.version=2025-06-18 mcp.session.id=s2 network.transport=pipe switchboard.tool.source=mcp switchboard.tool.source_name=files] []",
			"a2a_served":         "a2a jsonrpc server Unset: [switchboard.a2a.method=jsonrpc] []",
			"bus_send":           "send step producer Unset: [messaging.destination.name=step messaging.operation.name=send messaging.operation.type=send messaging.system=nats] []",
			"bus_process":        "process step consumer Unset: [messaging.consumer.group.name=step messaging.destination.name=step messaging.operation.name=process messaging.operation.type=process messaging.system=nats] [switchboard.retry{error.type=transient switchboard.attempt=2}]",
		}},
		{false, true, map[string]string{
			"invoke_agent": "invoke_agent helper internal Error:budget [error.type=budget gen_ai.agent.name=helper gen_ai.operation.name=invoke_agent gen_ai.request.model=gpt-4o gen_ai.system=openai gen_ai.usage.input_tokens=3 gen_ai.usage.output_tokens=4 switchboard.run.id=r1 switchboard.run.parent=r0] [gen_ai.user.message{content=hi} gen_ai.assistant.message{content=bye}]",
			"execute_tool": "execute_tool add client Unset: [gen_ai.operation.name=execute_tool gen_ai.tool.call.id=c1 gen_ai.tool.name=add gen_ai.tool.type=extension switchboard.tool.source=mcp switchboard.tool.source_name=files] [switchboard.permission{switchboard.permission=ask}]",
		}},
		{true, true, map[string]string{
			"invoke_agent":    `invoke_agent helper internal Error:budget [error.type=budget gen_ai.agent.name=helper gen_ai.input.messages=[{"parts":[{"content":"hi","type":"text"}],"role":"user"}] gen_ai.operation.name=invoke_agent gen_ai.output.messages=[{"parts":[{"content":"bye","type":"text"}],"role":"assistant"}] gen_ai.provider.name=openai gen_ai.request.model=gpt-4o gen_ai.usage.input_tokens=3 gen_ai.usage.output_tokens=4 switchboard.run.id=r1 switchboard.run.parent=r0] []`,
			"chat":            `chat gpt-4o client Error:transient [error.type=transient gen_ai.operation.name=chat gen_ai.provider.name=openai gen_ai.request.max_tokens=256 gen_ai.request.model=gpt-4o gen_ai.request.temperature=0.5 gen_ai.response.finish_reasons=["stop"] gen_ai.response.id=chatcmpl-1 gen_ai.response.model=gpt-4o-2024-08-06 gen_ai.usage.cache_creation.input_tokens=1 gen_ai.usage.cache_read.input_tokens=3 gen_ai.usage.input_tokens=5 gen_ai.usage.output_tokens=6 gen_ai.usage.reasoning.output_tokens=2 server.address=api.openai.com server.port=443 switchboard.usage.cost=0.25] [switchboard.retry{switchboard.attempt=2}]`,
			"execute_tool":    `execute_tool add client Unset: [gen_ai.operation.name=execute_tool gen_ai.tool.call.arguments={"a":1} gen_ai.tool.call.id=c1 gen_ai.tool.call.result=2 gen_ai.tool.name=add gen_ai.tool.type=extension switchboard.tool.source=mcp switchboard.tool.source_name=files] [switchboard.permission{switchboard.permission=ask}]`,
			"invoke_workflow": "invoke_workflow pipeline internal Unset: [gen_ai.operation.name=invoke_workflow gen_ai.workflow.name=pipeline switchboard.run.id=w1] []",
		}},
	} {
		for _, op := range slices.Sorted(maps.Keys(tc.want)) {
			t.Run(fmt.Sprintf("latest=%v/content=%v/%s", tc.latest, tc.content, op), func(t *testing.T) {
				if tc.latest {
					t.Setenv(EnvOptIn, OptInLatest)
				}
				rec := tracetest.NewSpanRecorder()
				tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
				defer func() { _ = tp.Shutdown(context.Background()) }()
				spanOps[op](build(tp, metricnoop.NewMeterProvider(), tc.content))
				ended := rec.Ended()
				if len(ended) != 1 {
					t.Fatalf("%d spans ended, want 1", len(ended))
				}
				if got := describe(ended[0]); got != tc.want[op] {
					t.Errorf("span\n got %s\nwant %s", got, tc.want[op])
				}
				schema := SchemaURL136
				if tc.latest {
					schema = SchemaURLLatest
				}
				if sc := ended[0].InstrumentationScope(); sc.Name != ScopeName || sc.Version != Version() || sc.Version == "" || sc.SchemaURL != schema {
					t.Errorf("scope %+v, want %s at version %q with schema %s", sc, ScopeName, Version(), schema)
				}
			})
		}
	}
}

// describe is a span's name, kind, status, sorted attributes and events.
func describe(s sdktrace.ReadOnlySpan) string {
	kv := func(attrs []strKV) []string {
		out := make([]string, 0, len(attrs))
		for _, a := range attrs {
			out = append(out, a.k+"="+a.v)
		}
		slices.Sort(out)
		return out
	}
	var attrs []strKV
	for _, a := range s.Attributes() {
		attrs = append(attrs, strKV{string(a.Key), a.Value.Emit()})
	}
	var events []string
	for _, e := range s.Events() {
		var ea []strKV
		for _, a := range e.Attributes {
			ea = append(ea, strKV{string(a.Key), a.Value.Emit()})
		}
		events = append(events, fmt.Sprintf("%s{%s}", e.Name, strings.Join(kv(ea), " ")))
	}
	return fmt.Sprintf("%s %s %s:%s [%s] [%s]", s.Name(), s.SpanKind(), s.Status().Code, s.Status().Description,
		strings.Join(kv(attrs), " "), strings.Join(events, " "))
}

type strKV struct{ k, v string }

// TestUnsampledSpansCostNothingOfOurs counts the allocations of an
// operation whose span does not record (an unsampled run's invoke_agent,
// and a tool call under a sampler that records nothing) beyond what the
// SDK itself allocates for tracer.Start and End of the same span: only
// the Op, none for span names, options, attributes or events.
func TestUnsampledSpansCostNothingOfOurs(t *testing.T) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.NeverSample())))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	tel := build(tp, metricnoop.NewMeterProvider(), true)
	tracer := tp.Tracer(ScopeName)
	sdkOnly := testing.AllocsPerRun(100, func() {
		_, span := tracer.Start(context.Background(), "invoke_agent helper", startInternal...)
		span.End()
	})
	for _, tc := range []struct {
		name string
		op   func()
	}{
		{"invoke_agent", func() {
			ctx, op := tel.StartAgent(context.Background(), "helper", "r1", "r0", "openai/gpt-4o", "hi", trace.SpanContext{})
			op.Usage(ctx, Tokens{Input: 3, Output: 4})
			op.Output("bye")
			op.End(ctx, "budget")
		}},
		{"execute_tool", func() {
			ctx, op := tel.StartTool(context.Background(), "add", "c1", "mcp", "files")
			Attempt(ctx)
			Attempt(ctx)
			op.Event(EventPermission, KeyPermission, "ask")
			op.ToolContent(`{"a":1}`, "2")
			op.End(ctx, "tool_error")
		}},
	} {
		if got := testing.AllocsPerRun(100, tc.op) - sdkOnly; got > 1 {
			t.Errorf("%s: %v allocations of ours per unsampled operation, want at most 1 (the Op)", tc.name, got)
		}
	}
}

// TestCachedNameIsBounded checks the span-name cache: the same names as
// spanName, and never more than nameCacheMax entries or a name longer than
// nameCacheLen, whatever names the model sends.
func TestCachedNameIsBounded(t *testing.T) {
	long := strings.Repeat("x", nameCacheLen+1)
	for _, tc := range []struct{ op, name string }{
		{OpExecuteTool, "add"}, {OpInvokeAgent, ""}, {OpInvokeAgent, "helper"}, {OpExecuteTool, long},
	} {
		if got, want := cachedName(tc.op, tc.name), spanName(tc.op, tc.name); got != want {
			t.Errorf("cachedName(%q, %q) = %q, want %q", tc.op, tc.name, got, want)
		}
	}
	for i := range 2 * nameCacheMax {
		if got, want := cachedName(OpExecuteTool, fmt.Sprint("tool", i)), fmt.Sprint("execute_tool tool", i); got != want {
			t.Fatalf("cachedName = %q, want %q", got, want)
		}
	}
	names.RLock()
	defer names.RUnlock()
	if len(names.m) > nameCacheMax {
		t.Errorf("%d names cached, want at most %d", len(names.m), nameCacheMax)
	}
	if _, ok := names.m[[2]string{OpExecuteTool, long}]; ok {
		t.Error("a name longer than nameCacheLen was cached")
	}
}

// TestOpContextIsTheParents checks the context a recording span's
// operation returns (an opCtx, not context.WithValue): it carries the
// span, the Op, the parent's values, deadline and cancellation with its
// cause.
func TestOpContextIsTheParents(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	tel := build(tp, metricnoop.NewMeterProvider(), false)
	type key struct{}
	cause := errors.New("stop")
	for _, tc := range []struct {
		name  string
		start func(context.Context) (context.Context, *Op)
	}{
		{"execute_tool", func(ctx context.Context) (context.Context, *Op) { return tel.StartTool(ctx, "add", "c1", "", "") }},
		{"chat", func(ctx context.Context) (context.Context, *Op) { return tel.StartChat(ctx, "m", "") }},
		{"invoke_workflow", func(ctx context.Context) (context.Context, *Op) { return tel.StartWorkflow(ctx, "w", "w1") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent, cancel := context.WithCancelCause(context.WithValue(context.Background(), key{}, "v"))
			parent, stop := context.WithTimeout(parent, time.Hour)
			defer stop()
			ctx, op := tc.start(parent)
			if got, _ := ctx.Value(key{}).(string); got != "v" {
				t.Errorf("parent's value = %q, want v", got)
			}
			if ctx.Value(opKey{}) != op || !trace.SpanFromContext(ctx).SpanContext().Equal(op.SpanContext()) {
				t.Error("the context does not carry the operation and its span")
			}
			if dl, ok := ctx.Deadline(); !ok || time.Until(dl) < time.Minute {
				t.Errorf("deadline %v %v, want the parent's", dl, ok)
			}
			cancel(cause)
			select {
			case <-ctx.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("cancelling the parent did not reach the operation's context")
			}
			if !errors.Is(context.Cause(ctx), cause) || !errors.Is(ctx.Err(), context.Canceled) {
				t.Errorf("cause %v, err %v, want %v and canceled", context.Cause(ctx), ctx.Err(), cause)
			}
			op.End(ctx, "")
		})
	}
}

// TestToolMetricSetsAreBounded checks the cache of tool-call metric sets:
// the attributes of the source asked for, and never more than nameCacheMax
// sources or a name longer than nameCacheLen kept.
func TestToolMetricSetsAreBounded(t *testing.T) {
	long := strings.Repeat("s", nameCacheLen+1)
	for i := range 2 * nameCacheMax {
		name := fmt.Sprint("server", i)
		if i == 7 {
			name = long
		}
		s := toolMetricSets("mcp", name)
		if len(s.attrs) != 2 || s.attrs[0] != KeyToolSource.String("mcp") || s.attrs[1] != KeyToolSourceName.String(name) {
			t.Fatalf("toolMetricSets(mcp, %s) attributes %v", name, s.attrs)
		}
	}
	toolSets.RLock()
	defer toolSets.RUnlock()
	if len(toolSets.m) > nameCacheMax {
		t.Errorf("%d sources cached, want at most %d", len(toolSets.m), nameCacheMax)
	}
	if _, ok := toolSets.m[[2]string{"mcp", long}]; ok {
		t.Error("a source name longer than nameCacheLen was cached")
	}
}

func TestServerAttrs(t *testing.T) {
	for _, tc := range []struct{ endpoint, want string }{
		{"", ""},
		{"https://api.openai.com/v1", "server.address=api.openai.com server.port=443"},
		{"http://localhost:11434", "server.address=localhost server.port=11434"},
		{"http://[::1]/v1", "server.address=::1 server.port=80"},
		{"generativelanguage.googleapis.com:443", "server.address=generativelanguage.googleapis.com server.port=443"},
		{"bedrock-runtime.us-east-1.amazonaws.com", "server.address=bedrock-runtime.us-east-1.amazonaws.com"},
		{"unix:///tmp/sock", ""},
		{"https://host:99999", "server.address=host"},
	} {
		var got []string
		for _, kv := range serverAttrs(tc.endpoint) {
			got = append(got, string(kv.Key)+"="+kv.Value.Emit())
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("serverAttrs(%q) = %v, want %q", tc.endpoint, got, tc.want)
		}
	}
}
