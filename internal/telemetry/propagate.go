package telemetry

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// propagator is W3C trace context and baggage, whatever the global
// propagator is: the MCP convention and our A2A and NATS peers expect them.
var propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// Fields are the keys propagation writes (traceparent, tracestate, baggage).
func Fields() []string { return propagator.Fields() }

// Active reports whether ctx carries a span context or baggage to send.
func Active(ctx context.Context) bool {
	return trace.SpanContextFromContext(ctx).IsValid() || baggage.FromContext(ctx).Len() > 0
}

// metaCarrier is an MCP params._meta object (values are strings).
type metaCarrier map[string]any

func (m metaCarrier) Get(k string) string {
	s, _ := m[k].(string)
	return s
}
func (m metaCarrier) Set(k, v string) { m[k] = v }
func (m metaCarrier) Keys() []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// InjectMeta writes ctx's trace context into an MCP _meta object, created
// when meta is nil; it returns meta unchanged when there is nothing to send.
func InjectMeta(ctx context.Context, meta map[string]any) map[string]any {
	if !Active(ctx) {
		return meta
	}
	if meta == nil {
		meta = map[string]any{}
	}
	propagator.Inject(ctx, metaCarrier(meta))
	return meta
}

// ExtractMeta continues the trace context of an MCP _meta object.
func ExtractMeta(ctx context.Context, meta map[string]any) context.Context {
	if len(meta) == 0 {
		return ctx
	}
	return propagator.Extract(ctx, metaCarrier(meta))
}

// InjectHTTP writes ctx's trace context into HTTP headers.
func InjectHTTP(ctx context.Context, h http.Header) {
	if Active(ctx) {
		propagator.Inject(ctx, propagation.HeaderCarrier(h))
	}
}

// ExtractHTTP continues the trace context of HTTP headers.
func ExtractHTTP(ctx context.Context, h http.Header) context.Context {
	return propagator.Extract(ctx, propagation.HeaderCarrier(h))
}

// headerCarrier is a NATS header (case-sensitive keys, written lower-case
// as the W3C names are).
type headerCarrier map[string][]string

func (h headerCarrier) Get(k string) string {
	if v := h[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}
func (h headerCarrier) Set(k, v string) { h[k] = []string{v} }
func (h headerCarrier) Keys() []string {
	out := make([]string, 0, len(h))
	for k := range h {
		out = append(out, k)
	}
	return out
}

// InjectHeader writes ctx's trace context into a NATS message header,
// created when h is nil; it returns h unchanged when there is nothing to
// send.
func InjectHeader(ctx context.Context, h map[string][]string) map[string][]string {
	if !Active(ctx) {
		return h
	}
	if h == nil {
		h = map[string][]string{}
	}
	propagator.Inject(ctx, headerCarrier(h))
	return h
}

// ExtractHeader continues the trace context of a NATS message header.
func ExtractHeader(ctx context.Context, h map[string][]string) context.Context {
	if len(h) == 0 {
		return ctx
	}
	return propagator.Extract(ctx, headerCarrier(h))
}

// Carry returns dst with src's span context and baggage: work that outlives
// the request that started it (a context of its own) stays in its trace.
func Carry(dst, src context.Context) context.Context {
	if sc := trace.SpanContextFromContext(src); sc.IsValid() {
		dst = trace.ContextWithSpanContext(dst, sc)
	}
	if b := baggage.FromContext(src); b.Len() > 0 {
		dst = baggage.ContextWithBaggage(dst, b)
	}
	return dst
}

// HasHTTP reports whether HTTP headers carry trace context or baggage.
func HasHTTP(h http.Header) bool {
	return h.Get("Traceparent") != "" || h.Get("Baggage") != ""
}

// TraceParent returns the W3C traceparent of ctx's span ("" without one),
// for a record that must say where it was written (a run's checkpoint).
func TraceParent(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	m := map[string]any{}
	propagation.TraceContext{}.Inject(ctx, metaCarrier(m))
	s, _ := m["traceparent"].(string)
	return s
}

// ParseTraceParent returns the span context a traceparent names (invalid
// for "" or a malformed value).
func ParseTraceParent(tp string) trace.SpanContext {
	if tp == "" {
		return trace.SpanContext{}
	}
	ctx := propagation.TraceContext{}.Extract(context.Background(), metaCarrier{"traceparent": tp})
	return trace.SpanContextFromContext(ctx)
}
