package e2etest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/otelenv"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/mcp"
	"github.com/switchboard-dev/switchboard/mcp/server"
)

// sbMCPServer is a stdio MCP server made with mcp/server, traced through
// the OTEL_* environment (otelenv): its tool "traceparent" answers, and
// each request it serves is a SERVER span exported when it exits.
func sbMCPServer() int {
	ctx := context.Background()
	tel, err := otelenv.Start(ctx, otelenv.Config{Service: "downstream"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "downstream:", err)
		return 1
	}
	tool := agent.NewFuncTool(agent.ToolSpec{Name: "traceparent", Description: "Answer."},
		func(context.Context, json.RawMessage) (*agent.Result, error) { return agent.TextResult("ok"), nil })
	srv, err := server.New(ctx, server.Config{Name: "downstream", Permissions: agent.AllowAll(), Toolsets: []agent.Toolset{agent.NewToolset("probe", tool)}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "downstream:", err)
		return 1
	}
	runErr := srv.Run(ctx, &gomcp.StdioTransport{})
	_ = srv.Close()
	if err := tel.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "downstream:", err)
		return 1
	}
	if runErr != nil {
		fmt.Fprintln(os.Stderr, "downstream:", runErr)
		return 1
	}
	return 0
}

// TestTraceThroughTheGateway: an agent calls a stdio MCP server through
// the switchboard binary (`mcp serve`, itself a stdio server of the
// agent). The downstream server (mcp/server, in a process of its own)
// continues the agent's trace: with the gateway's telemetry off its SERVER
// span's parent is the agent's execute_tool span (the gateway passes the
// caller's trace context on); with the gateway exporting too (OTEL_*
// set), the chain is the agent's execute_tool span, the gateway's SERVER
// span, its CLIENT span, the downstream's SERVER span: one trace across
// three processes.
func TestTraceThroughTheGateway(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the switchboard binary")
	}
	bin := testkit.GoBinary(t, "../../../cmd/switchboard")
	for _, traced := range []bool{false, true} {
		t.Run(map[bool]string{false: "gateway untraced", true: "gateway traced"}[traced], func(t *testing.T) {
			recv := testkit.NewOTLPReceiver(t)
			ctx := testkit.Ctx(t, 90*time.Second)
			tp, exp := testkit.Tracing(t)
			cfg := map[string]any{"mcpServers": map[string]any{"probe": map[string]any{
				"command": os.Args[0], "args": []string{"-test.run=^$"},
				"env": map[string]string{envMode: "mcpsb", "OTEL_EXPORTER_OTLP_ENDPOINT": recv.URL, "OTEL_SERVICE_NAME": "downstream"},
			}}}
			path := filepath.Join(t.TempDir(), ".mcp.json")
			data, _ := json.Marshal(cfg)
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			gwEnv := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "", "OTEL_TRACES_EXPORTER": "", "OTEL_METRICS_EXPORTER": "",
				"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "", "OTEL_SERVICE_NAME": "", "OTEL_SEMCONV_STABILITY_OPT_IN": ""}
			if traced {
				gwEnv["OTEL_EXPORTER_OTLP_ENDPOINT"] = recv.URL
			}
			servers, err := mcp.New(ctx, mcp.Config{Servers: []mcp.ServerConfig{{Name: "gw", Command: bin,
				Args: []string{"mcp", "serve", "-mcp-config", path, "-allow-all", "-prefix", "on"}, Env: gwEnv}}})
			if err != nil {
				t.Fatal(err)
			}
			const tool = "mcp__gw__mcp__probe__traceparent"
			a, err := agent.New(ctx, agent.Config{Name: "planner", Permissions: agent.AllowAll(),
				Model:    llm.NewScripted(llm.Calls(llm.CallTool("c1", tool, nil)), llm.Say("done")),
				Toolsets: []agent.Toolset{servers.Toolset()}, Telemetry: agent.Telemetry{TracerProvider: tp}})
			if err != nil {
				t.Fatal(err)
			}
			result := ""
			for ev, err := range a.Stream(ctx, "call it") {
				if err != nil {
					t.Fatal(err)
				}
				if ev.Type == agent.EventToolFinished && ev.Result != nil {
					result = ev.Result.Text()
				}
			}
			if result != "ok" {
				t.Fatalf("the tool answered %q, want ok", result)
			}
			// Closing the gateway ends the downstream server, which
			// flushes its spans (the gateway flushes its own on exit).
			if err := servers.Close(); err != nil {
				t.Fatal(err)
			}
			var toolSpan testkit.Span
			for _, s := range testkit.SpansFromStubs(exp.GetSpans(), "planner") {
				if s.Name == "execute_tool "+tool {
					toolSpan = s
				}
			}
			if toolSpan.SpanID == "" {
				t.Fatalf("no execute_tool span:\n%s", testkit.Tree(testkit.SpansFromStubs(exp.GetSpans(), "planner")))
			}
			find := func(spans []testkit.Span, service, name string) (testkit.Span, bool) {
				for _, s := range spans {
					if s.Service == service && s.Name == name && s.TraceID == toolSpan.TraceID {
						return s, true
					}
				}
				return testkit.Span{}, false
			}
			remote := recv.WaitFor(t, 30*time.Second, func(s []testkit.Span) bool {
				_, down := find(s, "downstream", "tools/call traceparent")
				_, gw := find(s, "switchboard", "tools/call traceparent")
				return down && (gw || !traced)
			})
			down, _ := find(remote, "downstream", "tools/call traceparent")
			if down.Attrs["mcp.method.name"] != "tools/call" || down.Attrs["gen_ai.tool.name"] != "traceparent" {
				t.Errorf("the downstream span's attributes: %v", down.Attrs)
			}
			if !traced {
				if down.ParentID != toolSpan.SpanID {
					t.Fatalf("the downstream span's parent is %s, want the agent's execute_tool span %s\n%s", down.ParentID, toolSpan.SpanID,
						testkit.Tree(append(remote, testkit.SpansFromStubs(exp.GetSpans(), "planner")...)))
				}
				for _, s := range remote {
					if s.Service == "switchboard" {
						t.Errorf("the untraced gateway exported span %q", s.Name)
					}
				}
				return
			}
			served, ok1 := find(remote, "switchboard", "tools/call mcp__probe__traceparent")
			called, ok2 := find(remote, "switchboard", "tools/call traceparent")
			if !ok1 || !ok2 || served.ParentID != toolSpan.SpanID || called.ParentID != served.SpanID || down.ParentID != called.SpanID {
				t.Fatalf("want execute_tool → gateway SERVER → gateway CLIENT → downstream SERVER; got:\n%s",
					testkit.Tree(append(remote, testkit.SpansFromStubs(exp.GetSpans(), "planner")...)))
			}
			if served.Kind != "server" || called.Kind != "client" || down.Kind != "server" {
				t.Errorf("span kinds: gateway %s and %s, downstream %s; want server, client, server", served.Kind, called.Kind, down.Kind)
			}
			if called.Attrs["mcp.method.name"] != "tools/call" || called.Attrs["gen_ai.tool.name"] != "traceparent" ||
				called.Attrs["network.transport"] != "pipe" {
				t.Errorf("the gateway's CLIENT span's attributes: %v", called.Attrs)
			}
		})
	}
}
