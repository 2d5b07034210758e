package telemetry

import (
	"context"
	"net/http"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv136 "go.opentelemetry.io/otel/semconv/v1.36.0"
	genai136 "go.opentelemetry.io/otel/semconv/v1.36.0/genaiconv"
	semconvlatest "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestNamesMatchConventions checks every GenAI name against otel-go's
// semconv packages: 1.36 and 1.41, the latest that still has them.
func TestNamesMatchConventions(t *testing.T) {
	cases := []struct {
		ours, conv attribute.Key
	}{
		{KeyOperation, semconv136.GenAIOperationNameKey},
		{KeyAgentName, semconv136.GenAIAgentNameKey},
		{KeyAgentID, semconv136.GenAIAgentIDKey},
		{KeyConversationID, semconv136.GenAIConversationIDKey},
		{KeyRequestModel, semconv136.GenAIRequestModelKey},
		{KeyResponseModel, semconv136.GenAIResponseModelKey},
		{KeyInputTokens, semconv136.GenAIUsageInputTokensKey},
		{KeyOutputTokens, semconv136.GenAIUsageOutputTokensKey},
		{KeyToolName, semconv136.GenAIToolNameKey},
		{KeyToolCallID, semconv136.GenAIToolCallIDKey},
		{KeyToolType, semconv136.GenAIToolTypeKey},
		{KeyTokenType, semconv136.GenAITokenTypeKey},
		{KeyErrorType, semconv136.ErrorTypeKey},
		{KeySystem, semconv136.GenAISystemKey},
		{KeyOperation, semconvlatest.GenAIOperationNameKey},
		{KeyAgentName, semconvlatest.GenAIAgentNameKey},
		{KeyToolName, semconvlatest.GenAIToolNameKey},
		{KeyToolCallID, semconvlatest.GenAIToolCallIDKey},
		{KeyToolType, semconvlatest.GenAIToolTypeKey},
		{KeyInputTokens, semconvlatest.GenAIUsageInputTokensKey},
		{KeyCacheReadTokens, semconvlatest.GenAIUsageCacheReadInputTokensKey},
		{KeyCacheWriteTokens, semconvlatest.GenAIUsageCacheCreationInputTokensKey},
		{KeyReasoningTokens, semconvlatest.GenAIUsageReasoningOutputTokensKey},
		{KeyTemperature, semconvlatest.GenAIRequestTemperatureKey},
		{KeyServerAddress, semconvlatest.ServerAddressKey},
		{KeyServerPort, semconvlatest.ServerPortKey},
		{KeyProviderName, semconvlatest.GenAIProviderNameKey},
		{KeyWorkflowName, semconvlatest.GenAIWorkflowNameKey},
		{KeyInputMessages, semconvlatest.GenAIInputMessagesKey},
		{KeyOutputMessages, semconvlatest.GenAIOutputMessagesKey},
		{KeyToolArguments, semconvlatest.GenAIToolCallArgumentsKey},
		{KeyToolResult, semconvlatest.GenAIToolCallResultKey},
		{KeyErrorType, semconvlatest.ErrorTypeKey},
	}
	for _, tc := range cases {
		if tc.ours != tc.conv {
			t.Errorf("attribute %q, the convention says %q", tc.ours, tc.conv)
		}
	}
	ops := map[string]string{OpInvokeAgent: string(semconvlatest.GenAIOperationNameInvokeAgent.Value.AsString()),
		OpChat: semconvlatest.GenAIOperationNameChat.Value.AsString(), OpExecuteTool: semconvlatest.GenAIOperationNameExecuteTool.Value.AsString()}
	for ours, conv := range ops {
		if ours != conv {
			t.Errorf("operation %q, the convention says %q", ours, conv)
		}
	}
	if n := (genai136.ClientTokenUsage{}).Name(); n != MetricTokenUsage {
		t.Errorf("metric %q, the convention says %q", MetricTokenUsage, n)
	}
	if n := (genai136.ClientOperationDuration{}).Name(); n != MetricOpDuration {
		t.Errorf("metric %q, the convention says %q", MetricOpDuration, n)
	}
}

func TestOffWithoutProviders(t *testing.T) {
	sdkTP := sdktrace.NewTracerProvider()
	defer func() { _ = sdkTP.Shutdown(context.Background()) }()
	sdkMP := sdkmetric.NewMeterProvider()
	defer func() { _ = sdkMP.Shutdown(context.Background()) }()
	cases := []struct {
		name        string
		src         *Source
		on, tracing bool
	}{
		{"global defaults", NewSource(nil, nil, false), false, false},
		{"explicit no-ops", NewSource(tracenoop.NewTracerProvider(), metricnoop.NewMeterProvider(), false), false, false},
		{"tracer only", NewSource(sdkTP, metricnoop.NewMeterProvider(), false), true, true},
		{"meter only", NewSource(tracenoop.NewTracerProvider(), sdkMP, false), true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.src.Get()
			if (got != nil) != tc.on || got.Tracing() != tc.tracing {
				t.Fatalf("telemetry %v (tracing %v), want on %v tracing %v", got != nil, got.Tracing(), tc.on, tc.tracing)
			}
		})
	}
	// A nil Telemetry is a no-op everywhere.
	var off *Telemetry
	ctx, op := off.StartAgent(context.Background(), "a", "r", "", "m", "in", trace.SpanContext{})
	op.Usage(ctx, Tokens{Input: 1, Output: 2})
	op.Event("x", KeyPermission, "y")
	op.End(ctx, "")
	if ctx != context.Background() || op != nil {
		t.Fatal("a nil Telemetry changed the context or made an operation")
	}
}

func TestGlobalProviderIsFollowed(t *testing.T) {
	src := NewSource(nil, nil, false)
	if src.Get() != nil {
		t.Fatal("telemetry on before a global provider was set")
	}
	tp := sdktrace.NewTracerProvider()
	defer func() { _ = tp.Shutdown(context.Background()) }()
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	defer otel.SetTracerProvider(prev)
	if !src.Get().Tracing() {
		t.Fatal("the global provider set after wiring is not used")
	}
}

func TestPropagationRoundTrip(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	defer func() { _ = tp.Shutdown(context.Background()) }()
	m, _ := baggage.NewMember("tenant", "acme")
	bag, _ := baggage.New(m)
	ctx, span := tp.Tracer("t").Start(baggage.ContextWithBaggage(context.Background(), bag), "root")
	defer span.End()
	want := span.SpanContext()
	cases := []struct {
		name string
		rt   func(ctx context.Context) context.Context
	}{
		{"mcp _meta", func(ctx context.Context) context.Context {
			meta := InjectMeta(ctx, map[string]any{"progressToken": 1})
			if _, ok := meta["traceparent"].(string); !ok || meta["progressToken"] != 1 {
				t.Errorf("meta %v: no traceparent, or the progress token was lost", meta)
			}
			return ExtractMeta(context.Background(), meta)
		}},
		{"http", func(ctx context.Context) context.Context {
			h := http.Header{}
			InjectHTTP(ctx, h)
			return ExtractHTTP(context.Background(), h)
		}},
		{"nats", func(ctx context.Context) context.Context {
			h := InjectHeader(ctx, nil)
			if h["traceparent"] == nil {
				t.Errorf("header %v has no traceparent", h)
			}
			return ExtractHeader(context.Background(), h)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.rt(ctx)
			sc := trace.SpanContextFromContext(got)
			if sc.TraceID() != want.TraceID() || sc.SpanID() != want.SpanID() || !sc.IsRemote() {
				t.Errorf("continued %v, want remote %v", sc, want)
			}
			if v := baggage.FromContext(got).Member("tenant").Value(); v != "acme" {
				t.Errorf("baggage tenant %q, want acme", v)
			}
		})
	}
	if InjectMeta(context.Background(), nil) != nil || InjectHeader(context.Background(), nil) != nil {
		t.Error("an inactive context wrote trace context")
	}
}

// FuzzExtract feeds arbitrary trace context from outside (an MCP _meta, a
// NATS header) through the extractors: they must not panic, and an invalid
// traceparent must not yield a valid span context.
func FuzzExtract(f *testing.F) {
	f.Add("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "k=v", "a=b")
	f.Add("ff-00000000000000000000000000000000-0000000000000000-00", "", "")
	f.Add("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra", "x", "%%%")
	f.Fuzz(func(t *testing.T, tp, ts, bg string) {
		for _, ctx := range []context.Context{
			ExtractMeta(context.Background(), map[string]any{"traceparent": tp, "tracestate": ts, "baggage": bg}),
			ExtractHeader(context.Background(), map[string][]string{"traceparent": {tp}, "tracestate": {ts}, "baggage": {bg}}),
			ExtractMeta(context.Background(), map[string]any{"traceparent": 42, "baggage": []any{bg}}),
		} {
			sc := trace.SpanContextFromContext(ctx)
			if sc.IsValid() && (len(tp) < 55 || sc.TraceID().String() != tp[3:35]) {
				t.Fatalf("traceparent %q gave span context %v", tp, sc)
			}
		}
	})
}
