package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/internal/testkit"
)

// TestDemoTrace: -trace prints the run's span tree, one trace from the main
// agent through the A2A peer; with OTEL_EXPORTER_OTLP_ENDPOINT set, the
// same spans are exported in batches over OTLP/HTTP to a real receiver.
func TestDemoTrace(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the demo binary")
	}
	bin := buildDemo(t)
	for _, otlp := range []bool{false, true} {
		t.Run(map[bool]string{false: "tree", true: "otlp"}[otlp], func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "-trace", "-step", "10ms", "-inject=false")
			cmd.Env = append(os.Environ(), "OTEL_EXPORTER_OTLP_ENDPOINT=", "OTEL_SEMCONV_STABILITY_OPT_IN=")
			var recv *testkit.OTLPReceiver
			if otlp {
				recv = testkit.NewOTLPReceiver(t)
				cmd.Env = append(cmd.Env, "OTEL_EXPORTER_OTLP_ENDPOINT="+recv.URL)
			}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("demo -trace: %v\n%s\n%s", err, stdout.String(), stderr.String())
			}
			if !otlp {
				out := stdout.String()
				// 17 spans in the main run's trace, 3 and 3 in the parked
				// publisher's two attempts (its own traces: it is not part of
				// the main run).
				if n := strings.Count(out, "invoke_agent publisher "); n != 2 {
					t.Errorf("%d invoke_agent publisher spans, want 2 (parked, resumed)", n)
				}
				for _, want := range []string{"■ Trace (23 spans)", "\n  invoke_agent switchboard-demo ",
					"\n    execute_tool a2a__researcher ", "\n      a2a jsonrpc ", "\n        invoke_agent researcher ",
					"\n          execute_tool search_sources ", "event:switchboard.permission"} {
					if !strings.Contains(out, want) {
						t.Errorf("the span tree lacks %q:\n%s", want, out[strings.Index(out, "■ Trace"):])
					}
				}
				return
			}
			if !strings.Contains(stdout.String(), "telemetry: exported (traces true, metrics true)") || strings.Contains(stdout.String(), "■ Trace") {
				t.Errorf("the demo did not say it exported (or printed the tree):\n%s", stdout.String())
			}
			spans := recv.Spans() // the demo flushed before it exited
			tree := testkit.Tree(spans)
			main := ""
			for _, s := range spans {
				if s.Name == "invoke_agent switchboard-demo" {
					main = s.TraceID
				}
			}
			inMain := 0
			for _, s := range spans {
				if s.TraceID == main {
					inMain++
				}
				if s.Service != "switchboard-demo" {
					t.Errorf("span %q: service %q", s.Name, s.Service)
				}
			}
			if len(spans) != 23 || inMain != 17 || !strings.Contains(tree, "\n  execute_tool a2a__researcher\n    a2a jsonrpc\n      invoke_agent researcher\n") {
				t.Errorf("the receiver has %d spans, %d in the main run's trace (want 23 and 17):\n%s", len(spans), inMain, tree)
			}
			metrics := map[string]bool{}
			for _, m := range recv.Metrics() {
				metrics[m.Name] = m.Service == "switchboard-demo"
			}
			for _, name := range []string{"gen_ai.client.token.usage", "gen_ai.client.operation.duration", "switchboard.tool.calls"} {
				if !metrics[name] {
					t.Errorf("metric %s not exported by switchboard-demo (got %v)", name, metrics)
				}
			}
		})
	}
}

// TestDemoExportFailure: with OTEL_EXPORTER_OTLP_PROTOCOL=grpc pointed at
// a port where no collector listens, the demo says the export failed and
// exits non-zero; it never says "exported". With a gRPC collector there,
// it exports over gRPC.
func TestDemoExportFailure(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the demo binary")
	}
	bin := buildDemo(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	_ = ln.Close()
	for _, up := range []bool{false, true} {
		t.Run(map[bool]string{false: "no collector", true: "grpc collector"}[up], func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			endpoint := dead
			var recv *testkit.OTLPReceiver
			if up {
				recv = testkit.NewOTLPGRPCReceiver(t)
				endpoint = recv.URL
			}
			cmd := exec.CommandContext(ctx, bin, "-step", "10ms", "-inject=false")
			cmd.Env = append(os.Environ(), "OTEL_EXPORTER_OTLP_ENDPOINT="+endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc",
				"OTEL_EXPORTER_OTLP_TIMEOUT=1000", "OTEL_SERVICE_NAME=my-demo", "OTEL_SEMCONV_STABILITY_OPT_IN=")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if !up {
				if err == nil || !strings.Contains(stdout.String(), "telemetry: exporting failed") || strings.Contains(stdout.String(), "telemetry: exported") {
					t.Fatalf("demo with no collector: %v; want a failure reported\n%s\n%s", err, stdout.String(), stderr.String())
				}
				return
			}
			if err != nil || !strings.Contains(stdout.String(), "telemetry: exported (traces true, metrics true)") {
				t.Fatalf("demo: %v\n%s\n%s", err, stdout.String(), stderr.String())
			}
			spans := recv.Spans()
			if len(spans) == 0 || len(recv.Metrics()) == 0 {
				t.Fatalf("the gRPC collector got %d spans and %d metrics", len(spans), len(recv.Metrics()))
			}
			for _, s := range spans {
				if s.Service != "my-demo" {
					t.Fatalf("span %q from service %q, want OTEL_SERVICE_NAME's my-demo", s.Name, s.Service)
				}
			}
		})
	}
}
