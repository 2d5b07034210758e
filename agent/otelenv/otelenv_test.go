package otelenv_test

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.uber.org/goleak"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/otelenv"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"))
}

// otelVars are the variables a test may set; each case starts with all of
// them unset, whatever the environment running the tests holds.
var otelVars = []string{"OTEL_SDK_DISABLED", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_TRACES_EXPORTER",
	"OTEL_METRICS_EXPORTER", "OTEL_LOGS_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
	"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
	"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_INSECURE",
	"OTEL_SEMCONV_STABILITY_OPT_IN"}

// TestExportFollowsTheEnvironment runs one traced agent run under the setup
// each environment makes and checks, at a real OTLP receiver (HTTP or
// gRPC), what arrived: the service name (the default only when the
// environment names none), the protocol, the per-signal endpoints, and the
// GenAI metrics.
func TestExportFollowsTheEnvironment(t *testing.T) {
	const traces, metrics = "/v1/traces", "/v1/metrics"
	grpcTraces, grpcMetrics := "grpc:/opentelemetry.proto.collector.trace.v1.TraceService/Export",
		"grpc:/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"
	for _, tc := range []struct {
		name    string
		grpc    bool
		env     func(url string) map[string]string
		service string
		paths   []string // the kinds of export that must arrive (and no other)
	}{
		{"http, the default service name", false, func(u string) map[string]string {
			return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": u, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}
		}, "default-svc", []string{traces, metrics}},
		{"http is the default protocol; OTEL_SERVICE_NAME wins", false, func(u string) map[string]string {
			return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": u, "OTEL_SERVICE_NAME": "from-env"}
		}, "from-env", []string{traces, metrics}},
		{"grpc", true, func(u string) map[string]string {
			return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": u, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
				"OTEL_RESOURCE_ATTRIBUTES": "service.name=from-attrs,deployment.environment=test"}
		}, "from-attrs", []string{grpcTraces, grpcMetrics}},
		{"the traces endpoint alone exports traces", false, func(u string) map[string]string {
			return map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": u + traces}
		}, "default-svc", []string{traces}},
		{"the metrics endpoint alone exports metrics, over grpc", true, func(u string) map[string]string {
			return map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": u, "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "grpc"}
		}, "default-svc", []string{grpcMetrics}},
		{"OTEL_TRACES_EXPORTER=none keeps the metrics", false, func(u string) map[string]string {
			return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": u, "OTEL_TRACES_EXPORTER": "none"}
		}, "default-svc", []string{metrics}},
		{"OTEL_METRICS_EXPORTER=otlp with the traces endpoint", false, func(u string) map[string]string {
			return map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": u + traces, "OTEL_METRICS_EXPORTER": "otlp",
				"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": u + metrics}
		}, "default-svc", []string{traces, metrics}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range otelVars {
				t.Setenv(v, "")
			}
			var recv *testkit.OTLPReceiver
			if tc.grpc {
				recv = testkit.NewOTLPGRPCReceiver(t)
			} else {
				recv = testkit.NewOTLPReceiver(t)
			}
			for k, v := range tc.env(recv.URL) {
				t.Setenv(k, v)
			}
			ctx := testkit.Ctx(t, 30*time.Second)
			setup, err := otelenv.Start(ctx, otelenv.Config{Service: "default-svc", Version: "1.2.3"})
			if err != nil {
				t.Fatal(err)
			}
			runAgent(t, ctx)
			if err := setup.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			var kinds []string
			for _, p := range recv.Paths() {
				if !slices.Contains(kinds, p) {
					kinds = append(kinds, p)
				}
			}
			slices.Sort(kinds)
			want := slices.Sorted(slices.Values(tc.paths))
			if !slices.Equal(kinds, want) {
				t.Fatalf("exports arrived on %v, want %v", kinds, want)
			}
			if slices.Contains(want, traces) || slices.Contains(want, grpcTraces) {
				spans := recv.Spans()
				if len(spans) < 2 {
					t.Fatalf("%d spans received, want the run's invoke_agent and chat", len(spans))
				}
				for _, s := range spans {
					if s.Service != tc.service {
						t.Errorf("span %q came from service %q, want %q", s.Name, s.Service, tc.service)
					}
				}
			}
			if slices.Contains(want, metrics) || slices.Contains(want, grpcMetrics) {
				got := map[string]int{}
				for _, m := range recv.Metrics() {
					if m.Service != tc.service {
						t.Errorf("metric %q came from service %q, want %q", m.Name, m.Service, tc.service)
					}
					got[m.Name] += m.Points
				}
				for _, name := range []string{"gen_ai.client.token.usage", "gen_ai.client.operation.duration"} {
					if got[name] == 0 {
						t.Errorf("metric %s not received (got %v)", name, got)
					}
				}
			}
		})
	}
}

// runAgent runs a traced agent on the global providers: one run, one model
// turn.
func runAgent(t *testing.T, ctx context.Context) {
	t.Helper()
	a, err := agent.New(ctx, agent.Config{Name: "probe", Model: llm.NewScripted(llm.Say("hi"))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(ctx, "go"); err != nil {
		t.Fatal(err)
	}
}

// TestOffWithoutEnvironment: with nothing set, Start installs nothing and
// Close reports nothing.
func TestOffWithoutEnvironment(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
	}{
		{"nothing set", nil},
		{"both exporters none", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"}},
		{"sdk disabled", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_SDK_DISABLED": "true"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range otelVars {
				t.Setenv(v, "")
			}
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			tp, mp := otel.GetTracerProvider(), otel.GetMeterProvider()
			setup, err := otelenv.Start(context.Background(), otelenv.Config{Service: "x"})
			if err != nil {
				t.Fatal(err)
			}
			if setup.Traces() || setup.Metrics() || otel.GetTracerProvider() != tp || otel.GetMeterProvider() != mp {
				t.Errorf("traces %v, metrics %v, globals changed %v", setup.Traces(), setup.Metrics(),
					otel.GetTracerProvider() != tp || otel.GetMeterProvider() != mp)
			}
			if err := setup.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
}

// TestExportFailureIsAFailure: a collector that is not there makes Close
// fail, over HTTP and gRPC; it never passes for an export.
func TestExportFailureIsAFailure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	_ = ln.Close() // nothing listens there now
	for _, proto := range []string{"http/protobuf", "grpc"} {
		t.Run(proto, func(t *testing.T) {
			for _, v := range otelVars {
				t.Setenv(v, "")
			}
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", dead)
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", proto)
			t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "500")
			ctx := testkit.Ctx(t, 30*time.Second)
			setup, err := otelenv.Start(ctx, otelenv.Config{Service: "x", ShutdownTimeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			runAgent(t, ctx)
			err = setup.Close()
			if err == nil || !strings.Contains(err.Error(), "export") {
				t.Fatalf("Close: %v; want an export failure", err)
			}
		})
	}
}
