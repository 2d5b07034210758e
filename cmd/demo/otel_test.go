package main

import (
	"bytes"
	"context"
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
				// 16 spans in the main run's trace, 3 and 3 in the parked
				// publisher's two attempts (its own traces: it is not part of
				// the main run).
				if n := strings.Count(out, "invoke_agent publisher "); n != 2 {
					t.Errorf("%d invoke_agent publisher spans, want 2 (parked, resumed)", n)
				}
				for _, want := range []string{"■ Trace (22 spans)", "\n  invoke_agent switchboard-demo ",
					"\n    execute_tool a2a__researcher ", "\n      invoke_agent researcher ",
					"\n        execute_tool search_sources ", "event:switchboard.permission"} {
					if !strings.Contains(out, want) {
						t.Errorf("the span tree lacks %q:\n%s", want, out[strings.Index(out, "■ Trace"):])
					}
				}
				return
			}
			if !strings.Contains(stdout.String(), "trace: exported to "+recv.URL) || strings.Contains(stdout.String(), "■ Trace") {
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
			if len(spans) != 22 || inMain != 16 || !strings.Contains(tree, "\n  execute_tool a2a__researcher\n    invoke_agent researcher\n") {
				t.Errorf("the receiver has %d spans, %d in the main run's trace (want 22 and 16):\n%s", len(spans), inMain, tree)
			}
		})
	}
}
