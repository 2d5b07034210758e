package e2etest

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.36.0"

	"github.com/switchboard-dev/switchboard/a2a"
	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/worker"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/mcp"
)

// conventionKeys are the attributes of the conventions a span may carry
// (GenAI 1.36, error.type, server, messaging and MCP); Switchboard's own
// are under switchboard.*.
var conventionKeys = map[attribute.Key]bool{
	semconv.GenAIOperationNameKey: true, semconv.GenAISystemKey: true, semconv.GenAIAgentNameKey: true,
	semconv.GenAIRequestModelKey: true, semconv.GenAIUsageInputTokensKey: true, semconv.GenAIUsageOutputTokensKey: true,
	semconv.GenAIToolNameKey: true, semconv.GenAIToolCallIDKey: true, semconv.GenAIToolTypeKey: true,
	semconv.ErrorTypeKey: true, semconv.GenAIConversationIDKey: true, semconv.GenAIRequestMaxTokensKey: true,
	semconv.GenAIResponseFinishReasonsKey: true, semconv.GenAIResponseIDKey: true, semconv.GenAIResponseModelKey: true,
	semconv.ServerAddressKey: true, semconv.ServerPortKey: true, semconv.NetworkTransportKey: true,
	semconv.MessagingSystemKey: true, semconv.MessagingOperationNameKey: true, semconv.MessagingOperationTypeKey: true,
	semconv.MessagingDestinationNameKey: true, semconv.MessagingConsumerGroupNameKey: true,
	// The MCP conventions (semconv 1.37 and later; not in otel-go's v1.36.0).
	"mcp.method.name": true, "mcp.session.id": true, "mcp.protocol.version": true, "jsonrpc.request.id": true,
}

// TestOneTraceAcrossProcesses: one run calls a stdio MCP server, an A2A
// peer and a worker pool, each in a process of its own. The MCP server
// sees the traceparent in _meta; the peer and the worker continue the
// trace and export their spans over OTLP/HTTP to a real receiver. Together
// with the caller's in-memory spans they are one trace with the expected
// tree, and every attribute is a 1.36 GenAI name or Switchboard's own.
func TestOneTraceAcrossProcesses(t *testing.T) {
	recv := testkit.NewOTLPReceiver(t)
	otlpEnv := []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + recv.URL, "OTEL_SEMCONV_STABILITY_OPT_IN="}
	ctx := testkit.Ctx(t, 90*time.Second)
	tp, exp := testkit.Tracing(t)

	// The bus listens on loopback so that the worker process can join.
	b, err := bus.New(ctx, bus.Config{Listen: "127.0.0.1:0",
		Policy: testkit.FastPolicy(failure.PolicyConfig{})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	child(t, "worker", "READY", append(otlpEnv, envBusURL+"="+b.ClientURL())...)
	pool, err := worker.NewPool(b, "step", worker.PoolConfig{})
	if err != nil {
		t.Fatal(err)
	}
	stepTool, err := agent.AsTool(pool, nil)
	if err != nil {
		t.Fatal(err)
	}

	peerURL := child(t, "a2a", "URL", otlpEnv...)
	peers, err := a2a.NewToolset(ctx, a2a.ToolsetConfig{Peers: []a2a.Peer{{Name: "researcher", URL: peerURL}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = peers.Close() })

	servers, err := mcp.New(ctx, mcp.Config{Servers: []mcp.ServerConfig{{Name: "probe", Command: os.Args[0],
		Args: []string{"-test.run=^$"}, Env: map[string]string{envMode: "mcp"}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = servers.Close() })

	model := llm.NewScripted(
		llm.Calls(llm.CallTool("c1", "mcp__probe__traceparent", nil)),
		llm.Calls(llm.CallTool("c2", "a2a__researcher", map[string]any{"message": "look it up"})),
		llm.Calls(llm.CallTool("c3", "step", map[string]any{"input": "do it"})),
		llm.SummarizeResults("all done"))
	a, err := agent.New(ctx, agent.Config{Name: "planner", Model: model, Permissions: agent.AllowAll(),
		Toolsets: []agent.Toolset{servers.Toolset(), peers}, Tools: []agent.Tool{stepTool},
		Telemetry: agent.Telemetry{TracerProvider: tp}})
	if err != nil {
		t.Fatal(err)
	}
	var mcpSaw string
	for ev, err := range a.Stream(ctx, "research and do it") {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == agent.EventToolFinished && ev.Call.Tool == "mcp__probe__traceparent" && ev.Result != nil {
			mcpSaw = ev.Result.Text()
		}
	}

	local := testkit.SpansFromStubs(exp.GetSpans(), "planner")
	remote := recv.WaitFor(t, 30*time.Second, func(s []testkit.Span) bool {
		n := 0
		for _, sp := range s {
			if strings.HasPrefix(sp.Name, "invoke_agent ") {
				n++
			}
		}
		for _, sp := range s {
			// The worker's CONSUMER span, exported when the job ends, and
			// the peer's SERVER span, when its handler returns.
			if sp.Name == "process step" || sp.Name == "a2a jsonrpc" {
				n++
			}
		}
		return n >= 4 && len(s) >= 6
	})
	all := append(local, remote...)
	chat := "chat " + llm.NewScripted().Name()
	want := strings.Join([]string{
		"invoke_agent planner",
		"  " + chat,
		"  execute_tool mcp__probe__traceparent",
		"  " + chat,
		"  execute_tool a2a__researcher",
		"    a2a jsonrpc",
		"      invoke_agent researcher",
		"        " + chat,
		"  " + chat,
		"  execute_tool step",
		"    send step",
		"      process step",
		"        invoke_agent step",
		"          " + chat,
		"  " + chat,
	}, "\n") + "\n"
	if got := testkit.Tree(all); got != want {
		t.Fatalf("span tree:\n%s\nwant:\n%s", got, want)
	}
	trace := local[0].TraceID
	services := map[string]string{}
	for _, s := range all {
		if s.TraceID != trace {
			t.Errorf("span %q (%s) is in trace %s, not %s", s.Name, s.Service, s.TraceID, trace)
		}
		services[s.Name] = s.Service
		for k := range s.Attrs {
			if !conventionKeys[attribute.Key(k)] && !strings.HasPrefix(k, "switchboard.") {
				t.Errorf("span %q has attribute %q, neither a GenAI 1.36 name nor Switchboard's", s.Name, k)
			}
		}
	}
	if services["invoke_agent researcher"] != "a2a-peer" || services["invoke_agent step"] != "worker" {
		t.Errorf("the remote runs came from %v, want the a2a-peer and worker processes", services)
	}
	var mcpSpan testkit.Span
	for _, s := range local {
		if s.Name == "execute_tool mcp__probe__traceparent" {
			mcpSpan = s
		}
	}
	if mcpSpan.Kind != "client" || mcpSpan.Attrs["mcp.method.name"] != "tools/call" || mcpSpan.Attrs["gen_ai.tool.name"] != "traceparent" {
		t.Errorf("the MCP call's span: kind %s, attributes %v; want client, with the MCP conventions and the server's own tool name", mcpSpan.Kind, mcpSpan.Attrs)
	}
	// The hops between processes pair up for a service graph.
	kinds := map[string]string{"execute_tool a2a__researcher": "client", "a2a jsonrpc": "server", "send step": "producer", "process step": "consumer"}
	for _, s := range all {
		if k, ok := kinds[s.Name]; ok && s.Kind != k {
			t.Errorf("span %q is %s, want %s", s.Name, s.Kind, k)
		}
	}
	if wantTP := "traceparent=00-" + trace + "-" + mcpSpan.SpanID + "-01"; !strings.Contains(mcpSaw, wantTP) {
		t.Errorf("the MCP server saw %q, want %q", mcpSaw, wantTP)
	}
	_ = context.Background
}
