package telemetry

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// instruments are the metrics Switchboard records.
type instruments struct {
	tokens    metric.Int64Histogram
	opDur     metric.Float64Histogram
	toolCalls metric.Int64Counter
	toolDur   metric.Float64Histogram
	circuit   metric.Int64Counter
	busDur    metric.Float64Histogram
	a2aReqs   metric.Int64Counter
	cost      metric.Float64Counter
}

// The bucket boundaries the GenAI conventions advise.
var (
	tokenBuckets    = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}
	durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}
)

// newInstruments creates the instruments; an instrument the meter refuses
// is replaced by its no-op (the meter reports the error to otel's handler).
func newInstruments(m metric.Meter) *instruments {
	in := &instruments{}
	in.tokens, _ = m.Int64Histogram(MetricTokenUsage, metric.WithUnit("{token}"),
		metric.WithDescription("Number of input and output tokens used."), metric.WithExplicitBucketBoundaries(tokenBuckets...))
	in.opDur, _ = m.Float64Histogram(MetricOpDuration, metric.WithUnit("s"),
		metric.WithDescription("GenAI operation duration."), metric.WithExplicitBucketBoundaries(durationBuckets...))
	in.toolCalls, _ = m.Int64Counter(MetricToolCalls, metric.WithUnit("{call}"),
		metric.WithDescription("Tool calls, by source and failure kind."))
	in.toolDur, _ = m.Float64Histogram(MetricToolDuration, metric.WithUnit("s"),
		metric.WithDescription("Tool call duration, by source and failure kind."), metric.WithExplicitBucketBoundaries(durationBuckets...))
	in.circuit, _ = m.Int64Counter(MetricCircuitChanges, metric.WithUnit("{change}"),
		metric.WithDescription("Circuit breaker state changes, by source and new state."))
	in.busDur, _ = m.Float64Histogram(MetricBusDuration, metric.WithUnit("s"),
		metric.WithDescription("Bus request latency, by operation and failure kind."), metric.WithExplicitBucketBoundaries(durationBuckets...))
	in.a2aReqs, _ = m.Int64Counter(MetricA2ARequests, metric.WithUnit("{request}"),
		metric.WithDescription("A2A server requests, by method and failure kind."))
	in.cost, _ = m.Float64Counter(MetricCost, metric.WithUnit("{USD}"),
		metric.WithDescription("What model calls cost in US dollars, by provider and model, where a price is known."))
	return in
}

// CircuitChange records a circuit breaker's change of state.
func (t *Telemetry) CircuitChange(source, to string) {
	if t == nil || t.m == nil {
		return
	}
	t.m.circuit.Add(context.Background(), 1, metric.WithAttributes(KeyCircuitKey.String(source), KeyCircuitState.String(to)))
}

// BusRequest records one bus request's latency; kind is the failure kind
// ("" for success).
func (t *Telemetry) BusRequest(ctx context.Context, op string, start time.Time, kind string) {
	if t == nil || t.m == nil {
		return
	}
	t.m.busDur.Record(ctx, time.Since(start).Seconds(), metric.WithAttributes(withError([]attribute.KeyValue{KeyBusOp.String(op)}, kind)...))
}

// A2ARequest counts one request an A2A server handled.
func (t *Telemetry) A2ARequest(ctx context.Context, method, kind string) {
	if t == nil || t.m == nil {
		return
	}
	t.m.a2aReqs.Add(ctx, 1, metric.WithAttributes(withError([]attribute.KeyValue{KeyA2AMethod.String(method)}, kind)...))
}

// metricSets are the attributes of one kind of operation's metrics with
// their attribute sets made once: the success set (and a chat's input and
// output token sets); a set made at each measurement sorts and allocates.
type metricSets struct {
	attrs   []attribute.KeyValue
	ok      metric.MeasurementOption
	rec     []metric.RecordOption // ok, for histograms
	add     []metric.AddOption    // ok, for counters
	in, out []metric.RecordOption // a chat's token sets
}

func newMetricSets(attrs []attribute.KeyValue, tokens bool) *metricSets {
	s := &metricSets{attrs: attrs, ok: metric.WithAttributeSet(attribute.NewSet(attrs...))}
	s.rec, s.add = []metric.RecordOption{s.ok}, []metric.AddOption{s.ok}
	if tokens {
		tok := func(v string) []metric.RecordOption {
			return []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(append(attrs[:len(attrs):len(attrs)], KeyTokenType.String(v))...))}
		}
		s.in, s.out = tok("input"), tok("output")
	}
	return s
}

// ended is the option of an operation that ended with failure kind ("":
// success, the set made once).
func (s *metricSets) ended(kind string) metric.MeasurementOption {
	if kind == "" {
		return s.ok
	}
	return metric.WithAttributes(withError(s.attrs[:len(s.attrs):len(s.attrs)], kind)...)
}

// toolSets caches the metric sets of tool calls by source kind and name
// (bounded like the span names: sources come from the configuration).
var toolSets = struct {
	sync.RWMutex
	m map[[2]string]*metricSets
}{m: map[[2]string]*metricSets{}}

// toolMetricSets are the metric sets of a source's tool calls.
func toolMetricSets(kind, name string) *metricSets {
	k := [2]string{kind, name}
	toolSets.RLock()
	s := toolSets.m[k]
	toolSets.RUnlock()
	if s != nil {
		return s
	}
	s = newMetricSets([]attribute.KeyValue{KeyToolSource.String(kind), KeyToolSourceName.String(name)}, false)
	if len(name) <= nameCacheLen {
		toolSets.Lock()
		if len(toolSets.m) < nameCacheMax {
			toolSets.m[k] = s
		}
		toolSets.Unlock()
	}
	return s
}

func withError(attrs []attribute.KeyValue, kind string) []attribute.KeyValue {
	if kind != "" {
		attrs = append(attrs, KeyErrorType.String(kind))
	}
	return attrs
}
