package testkit

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// Span is a finished span as the telemetry tests compare them, from the
// in-memory exporter or from OTLP.
type Span struct {
	Name, TraceID, SpanID, ParentID string
	// Kind is the span kind's name: internal, server, client, producer,
	// consumer.
	Kind    string
	Start   time.Time
	Attrs   map[string]string
	Events  []string
	Links   []string // span ids
	Service string
}

// Tracing is a tracer provider that exports synchronously to an in-memory
// exporter, shut down when the test ends.
func Tracing(t testing.TB) (*sdktrace.TracerProvider, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp, exp
}

// SpansFromStubs converts the in-memory exporter's spans.
func SpansFromStubs(stubs tracetest.SpanStubs, service string) []Span {
	out := make([]Span, 0, len(stubs))
	for _, s := range stubs {
		sp := Span{Name: s.Name, TraceID: s.SpanContext.TraceID().String(), SpanID: s.SpanContext.SpanID().String(),
			Kind: s.SpanKind.String(), Start: s.StartTime, Attrs: map[string]string{}, Service: service}
		if s.Parent.IsValid() {
			sp.ParentID = s.Parent.SpanID().String()
		}
		for _, kv := range s.Attributes {
			sp.Attrs[string(kv.Key)] = kv.Value.Emit()
		}
		for _, e := range s.Events {
			sp.Events = append(sp.Events, e.Name)
		}
		for _, l := range s.Links {
			sp.Links = append(sp.Links, l.SpanContext.SpanID().String())
		}
		out = append(out, sp)
	}
	return out
}

// SpansFromOTLP converts the spans of an OTLP export request.
func SpansFromOTLP(req *coltracepb.ExportTraceServiceRequest) []Span {
	var out []Span
	for _, rs := range req.GetResourceSpans() {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = anyString(kv.GetValue())
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				sp := Span{Name: s.GetName(), TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
					Kind:  strings.ToLower(strings.TrimPrefix(s.GetKind().String(), "SPAN_KIND_")),
					Start: time.Unix(0, int64(s.GetStartTimeUnixNano())), Attrs: map[string]string{}, Service: service}
				if len(s.GetParentSpanId()) > 0 {
					sp.ParentID = hex.EncodeToString(s.GetParentSpanId())
				}
				for _, kv := range s.GetAttributes() {
					sp.Attrs[kv.GetKey()] = anyString(kv.GetValue())
				}
				for _, e := range s.GetEvents() {
					sp.Events = append(sp.Events, e.GetName())
				}
				for _, l := range s.GetLinks() {
					sp.Links = append(sp.Links, hex.EncodeToString(l.GetSpanId()))
				}
				out = append(out, sp)
			}
		}
	}
	return out
}

func anyString(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonpb.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	case *commonpb.AnyValue_DoubleValue:
		return fmt.Sprint(x.DoubleValue)
	}
	return v.String()
}

// Tree renders spans as an indented tree of names (children by start
// time); a span whose parent is not among them is a root, marked "?" when
// it has a parent id (a broken link).
func Tree(spans []Span) string {
	byID := map[string]bool{}
	kids := map[string][]Span{}
	var roots []Span
	for _, s := range spans {
		byID[s.SpanID] = true
	}
	for _, s := range spans {
		if s.ParentID != "" && byID[s.ParentID] {
			kids[s.ParentID] = append(kids[s.ParentID], s)
		} else {
			roots = append(roots, s)
		}
	}
	order := func(l []Span) {
		slices.SortStableFunc(l, func(a, b Span) int { return a.Start.Compare(b.Start) })
	}
	var b strings.Builder
	var walk func(s Span, depth int)
	walk = func(s Span, depth int) {
		mark := ""
		if depth == 0 && s.ParentID != "" {
			mark = "?"
		}
		fmt.Fprintf(&b, "%s%s%s\n", strings.Repeat("  ", depth), mark, s.Name)
		l := kids[s.SpanID]
		order(l)
		for _, k := range l {
			walk(k, depth+1)
		}
	}
	order(roots)
	for _, r := range roots {
		walk(r, 0)
	}
	return b.String()
}

// OTLPReceiver is a real OTLP trace and metric receiver, over HTTP
// (NewOTLPReceiver: /v1/traces, /v1/metrics, protobuf) or gRPC
// (NewOTLPGRPCReceiver: the collector's TraceService and MetricsService):
// it decodes each export with the official OTLP protobuf package and keeps
// the spans and the metrics' names with the service that sent them.
type OTLPReceiver struct {
	// URL is the receiver's base URL (the exporters' endpoint).
	URL     string
	mu      sync.Mutex
	spans   []Span
	metrics []Metric
	paths   []string
	exports int
	changed chan struct{}
}

// Metric is one metric an OTLP export carried.
type Metric struct {
	Name, Service string
	// Points is the number of data points (histogram or sum or gauge).
	Points int
}

// maxOTLPBody bounds one export's body.
const maxOTLPBody = 16 << 20

// NewOTLPReceiver starts a receiver, closed when the test ends.
func NewOTLPReceiver(t testing.TB) *OTLPReceiver {
	t.Helper()
	r := &OTLPReceiver{changed: make(chan struct{}, 1)}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

func (r *OTLPReceiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || (req.URL.Path != "/v1/traces" && req.URL.Path != "/v1/metrics") {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	var body io.Reader = http.MaxBytesReader(w, req.Body, maxOTLPBody)
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		defer zr.Close()
		body = io.LimitReader(zr, maxOTLPBody)
	}
	data, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var out []byte
	if req.URL.Path == "/v1/metrics" {
		var msg colmetricpb.ExportMetricsServiceRequest
		if err := proto.Unmarshal(data, &msg); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.addMetrics(req.URL.Path, &msg)
		out, _ = proto.Marshal(&colmetricpb.ExportMetricsServiceResponse{})
	} else {
		var msg coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(data, &msg); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.addSpans(req.URL.Path, &msg)
		out, _ = proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (r *OTLPReceiver) addSpans(path string, msg *coltracepb.ExportTraceServiceRequest) {
	r.mu.Lock()
	r.spans = append(r.spans, SpansFromOTLP(msg)...)
	r.paths = append(r.paths, path)
	r.exports++
	r.mu.Unlock()
	r.signal()
}

func (r *OTLPReceiver) addMetrics(path string, msg *colmetricpb.ExportMetricsServiceRequest) {
	r.mu.Lock()
	for _, rm := range msg.GetResourceMetrics() {
		service := ""
		for _, kv := range rm.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = anyString(kv.GetValue())
			}
		}
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				n := len(m.GetHistogram().GetDataPoints()) + len(m.GetSum().GetDataPoints()) + len(m.GetGauge().GetDataPoints())
				r.metrics = append(r.metrics, Metric{Name: m.GetName(), Service: service, Points: n})
			}
		}
	}
	r.paths = append(r.paths, path)
	r.exports++
	r.mu.Unlock()
	r.signal()
}

func (r *OTLPReceiver) signal() {
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// NewOTLPGRPCReceiver starts a receiver serving OTLP over gRPC (plaintext)
// on a loopback port, stopped when the test ends; its URL is
// http://127.0.0.1:port, the form an OTLP gRPC exporter takes as insecure.
func NewOTLPGRPCReceiver(t testing.TB) *OTLPReceiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &OTLPReceiver{changed: make(chan struct{}, 1), URL: "http://" + ln.Addr().String()}
	gs := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(gs, grpcTraces{r: r})
	colmetricpb.RegisterMetricsServiceServer(gs, grpcMetrics{r: r})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = gs.Serve(ln)
	}()
	t.Cleanup(func() {
		gs.Stop()
		<-done
	})
	return r
}

type grpcTraces struct {
	coltracepb.UnimplementedTraceServiceServer
	r *OTLPReceiver
}

func (g grpcTraces) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	g.r.addSpans("grpc:"+coltracepb.TraceService_Export_FullMethodName, req)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

type grpcMetrics struct {
	colmetricpb.UnimplementedMetricsServiceServer
	r *OTLPReceiver
}

func (g grpcMetrics) Export(_ context.Context, req *colmetricpb.ExportMetricsServiceRequest) (*colmetricpb.ExportMetricsServiceResponse, error) {
	g.r.addMetrics("grpc:"+colmetricpb.MetricsService_Export_FullMethodName, req)
	return &colmetricpb.ExportMetricsServiceResponse{}, nil
}

// Metrics returns the metrics received so far.
func (r *OTLPReceiver) Metrics() []Metric {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.metrics)
}

// Paths returns the HTTP paths (or "grpc:" and the gRPC method) of the
// exports received so far, in order.
func (r *OTLPReceiver) Paths() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.paths)
}

// Spans returns the spans received so far.
func (r *OTLPReceiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.spans)
}

// Exports is the number of export requests received.
func (r *OTLPReceiver) Exports() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.exports
}

// WaitFor waits until ok holds for the spans received, or fails the test
// after timeout.
func (r *OTLPReceiver) WaitFor(t testing.TB, timeout time.Duration, ok func([]Span) bool) []Span {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		if s := r.Spans(); ok(s) {
			return s
		}
		select {
		case <-r.changed:
		case <-deadline.C:
			t.Fatalf("the OTLP receiver did not get the expected spans within %s; it has:\n%s", timeout, Tree(r.Spans()))
			return nil
		}
	}
}
