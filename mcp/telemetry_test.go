package mcp

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// TestTraceContextInMeta: the stdio server (a child process) sees the
// execute_tool span's W3C trace context in params._meta; without tracing it
// sees none.
func TestTraceContextInMeta(t *testing.T) {
	m := newManager(t, quickConfig(testServer("s", "", nil)))
	for _, traced := range []bool{true, false} {
		t.Run(map[bool]string{true: "traced", false: "off"}[traced], func(t *testing.T) {
			tp, exp := testkit.Tracing(t)
			cfg := agent.Config{Toolsets: []agent.Toolset{m.Toolset()}, Permissions: agent.AllowAll(),
				Model: llm.NewScripted(llm.Calls(llm.CallTool("c1", "mcp__s__traceparent", nil)), llm.SummarizeResults("saw"))}
			if traced {
				cfg.Telemetry.TracerProvider = tp
			}
			a, err := agent.New(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			ans, err := a.Run(testkit.Ctx(t, 20*time.Second), "go")
			if err != nil {
				t.Fatal(err)
			}
			if !traced {
				if !strings.Contains(ans.Text, "traceparent= ") || len(exp.GetSpans()) != 0 {
					t.Fatalf("tracing off, yet the server saw %q (%d spans)", ans.Text, len(exp.GetSpans()))
				}
				return
			}
			var tool testkit.Span
			for _, s := range testkit.SpansFromStubs(exp.GetSpans(), "") {
				if s.Name == "execute_tool mcp__s__traceparent" {
					tool = s
				}
			}
			want := "traceparent=00-" + tool.TraceID + "-" + tool.SpanID + "-01"
			if tool.SpanID == "" || !strings.Contains(ans.Text, want) {
				t.Fatalf("the server saw %q, want %q", ans.Text, want)
			}
			if tool.Attrs["switchboard.tool.source"] != "mcp" || tool.Attrs["gen_ai.tool.type"] != "extension" {
				t.Errorf("execute_tool attributes %v", tool.Attrs)
			}
		})
	}
}
