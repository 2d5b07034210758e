// Package telemetry is Switchboard's OpenTelemetry instrumentation: the
// GenAI span and attribute names in one place (names.go), the spans of
// runs, model turns, tool calls and workflows, the metrics, W3C trace
// context propagation through MCP _meta, HTTP and NATS headers, and a
// zerolog hook. When both providers are no-ops (the global default) a
// *Telemetry is nil and every method returns at once.
package telemetry

import (
	"context"
	"fmt"
	"reflect"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// Telemetry is one resolved pair of providers. A nil *Telemetry is off.
type Telemetry struct {
	tracer  trace.Tracer // nil: no spans
	latest  bool
	content bool
	m       *instruments // nil: no metrics
	chat    atomic.Pointer[chatNames]
	quiet   *Telemetry // the same without spans (nil: no metrics either)
}

// Quiet is t without spans, for the operations under a span that does not
// record (an unsampled run): nil when t has no metrics either.
func (t *Telemetry) Quiet() *Telemetry {
	if t == nil {
		return nil
	}
	return t.quiet
}

// Latest reports whether the latest experimental GenAI attributes are used.
func (t *Telemetry) Latest() bool { return t != nil && t.latest }

// Content reports whether message content is recorded.
func (t *Telemetry) Content() bool { return t != nil && t.content }

// Tracing reports whether spans are recorded.
func (t *Telemetry) Tracing() bool { return t != nil && t.tracer != nil }

// The global providers as they were when this package was initialised:
// otel's delegating defaults, which are no-ops until a program sets its own.
var (
	defaultTP = otel.GetTracerProvider()
	defaultMP = otel.GetMeterProvider()
)

// same reports whether a and b are the same value without panicking on
// incomparable dynamic types.
func same(a, b any) bool {
	ta := reflect.TypeOf(a)
	return ta != nil && ta == reflect.TypeOf(b) && ta.Comparable() && a == b
}

func tracerOff(tp trace.TracerProvider) bool {
	switch tp.(type) {
	case nil, tracenoop.TracerProvider, *tracenoop.TracerProvider:
		return true
	}
	return same(tp, defaultTP) && fmt.Sprintf("%T", tp) == "*global.tracerProvider"
}

func meterOff(mp metric.MeterProvider) bool {
	switch mp.(type) {
	case nil, metricnoop.MeterProvider, *metricnoop.MeterProvider:
		return true
	}
	return same(mp, defaultMP) && fmt.Sprintf("%T", mp) == "*global.meterProvider"
}

// build makes the Telemetry of a pair of providers (nil when both are off).
func build(tp trace.TracerProvider, mp metric.MeterProvider, content bool) *Telemetry {
	t := &Telemetry{latest: latestFromEnv(), content: content}
	schema := SchemaURL136
	if t.latest {
		schema = SchemaURLLatest
	}
	if !tracerOff(tp) {
		t.tracer = tp.Tracer(ScopeName, trace.WithInstrumentationVersion(Version()), trace.WithSchemaURL(schema))
	}
	if !meterOff(mp) {
		t.m = newInstruments(mp.Meter(ScopeName, metric.WithInstrumentationVersion(Version()), metric.WithSchemaURL(schema)))
	}
	if t.tracer == nil && t.m == nil {
		return nil
	}
	if t.m != nil {
		t.quiet = &Telemetry{latest: t.latest, content: t.content, m: t.m}
		t.quiet.quiet = t.quiet
	}
	return t
}

// Source resolves a configuration's providers: nil ones mean the global
// providers, looked up at each Get so that a program may set them after
// wiring. The zero Source uses the global providers without content.
type Source struct {
	tp      trace.TracerProvider
	mp      metric.MeterProvider
	content bool
	fixed   *Telemetry // both providers given
	isFixed bool
	cache   atomic.Pointer[entry]
}

type entry struct {
	tp trace.TracerProvider
	mp metric.MeterProvider
	t  *Telemetry
}

// NewSource is the Source of the given providers (nil: the global ones).
func NewSource(tp trace.TracerProvider, mp metric.MeterProvider, content bool) *Source {
	s := &Source{tp: tp, mp: mp, content: content}
	if tp != nil && mp != nil {
		s.fixed, s.isFixed = build(tp, mp, content), true
	}
	return s
}

// Get is the current Telemetry (nil: off).
func (s *Source) Get() *Telemetry {
	if s == nil {
		return global.Get()
	}
	if s.isFixed {
		return s.fixed
	}
	tp, mp := s.tp, s.mp
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	if e := s.cache.Load(); e != nil && same(e.tp, tp) && same(e.mp, mp) {
		return e.t
	}
	e := &entry{tp: tp, mp: mp, t: build(tp, mp, s.content)}
	s.cache.Store(e)
	return e.t
}

var global = &Source{}

// Global is the Telemetry of the global providers (nil: off).
func Global() *Telemetry { return global.Get() }

type ctxKey struct{}

// With returns ctx carrying t, for the components a run calls (the bus's
// request metrics). A nil t leaves ctx as it is.
func With(ctx context.Context, t *Telemetry) context.Context {
	if t == nil {
		return ctx
	}
	return context.WithValue(ctx, ctxKey{}, t)
}

// From is the Telemetry ctx carries, else the global one.
func From(ctx context.Context) *Telemetry {
	if t := Carried(ctx); t != nil {
		return t
	}
	return Global()
}

// Carried is the Telemetry ctx carries (nil: none): a run inside a traced
// run or workflow uses its caller's providers when it has none of its own.
func Carried(ctx context.Context) *Telemetry {
	t, _ := ctx.Value(ctxKey{}).(*Telemetry)
	return t
}

// Disabled is a Source that is always off, whatever the global providers:
// the benchmarks' baseline, the code path before telemetry existed.
func Disabled() *Source { return &Source{isFixed: true} }
