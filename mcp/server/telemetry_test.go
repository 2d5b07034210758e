package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/mcp/server"
)

// headerTransport adds a traceparent header to every HTTP request.
type headerTransport struct{ tp string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("traceparent", h.tp)
	return http.DefaultTransport.RoundTrip(r)
}

// TestServedRequestsContinueTheTrace: a tools/call carrying the caller's
// W3C trace context, in params._meta (any transport) or, over Streamable
// HTTP, in the request's headers, runs its tool in the caller's trace.
// With otel's global tracer provider set the request is a SERVER span in
// the MCP conventions, a child of the caller's span; without one, the
// tool's context carries the caller's span context itself (so a gateway
// passes it on unchanged).
func TestServedRequestsContinueTheTrace(t *testing.T) {
	const (
		traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
		spanID  = "00f067aa0ba902b7"
		tp      = "00-" + traceID + "-" + spanID + "-01"
	)
	for _, tc := range []struct {
		name           string
		http, inHeader bool
		traced         bool
		viaConfig      bool // traced through Config.Telemetry, not the global provider
	}{
		{"_meta, in memory, untraced", false, false, false, false},
		{"_meta, in memory, traced", false, false, true, false},
		{"_meta, in memory, traced by Config.Telemetry", false, false, true, true},
		{"_meta, http, traced", true, false, true, false},
		{"header, http, untraced", true, true, false, false},
		{"header, http, traced", true, true, true, false},
		{"header, http, traced by Config.Telemetry", true, true, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tracer, mem := testkit.Tracing(t)
			cfg := server.Config{Permissions: agent.AllowAll()}
			if tc.viaConfig {
				cfg.Telemetry.TracerProvider = tracer
			} else if tc.traced {
				prev := otel.GetTracerProvider()
				otel.SetTracerProvider(tracer)
				t.Cleanup(func() { otel.SetTracerProvider(prev) })
			}
			seen := make(chan trace.SpanContext, 1)
			probe := agent.NewFuncTool(agent.ToolSpec{Name: "probe", Description: "reports its trace", ReadOnly: true,
				InputSchema: json.RawMessage(`{"type":"object"}`)},
				func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
					seen <- trace.SpanContextFromContext(ctx)
					return agent.TextResult("ok"), nil
				})
			cfg.Toolsets = []agent.Toolset{agent.NewToolset("t", probe)}
			srv := newServer(t, cfg)
			var cs *gomcp.ClientSession
			ctx := testkit.Ctx(t, 30*time.Second)
			if tc.http {
				hs := httptest.NewServer(srv.Handler())
				t.Cleanup(hs.Close)
				hc := &http.Client{}
				if tc.inHeader {
					hc.Transport = headerTransport{tp: tp}
				}
				c := gomcp.NewClient(&gomcp.Implementation{Name: "test-client", Version: "1"}, nil)
				var err error
				cs, err = c.Connect(ctx, &gomcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: hc}, nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cs.Close() })
			} else {
				cs = connectMem(t, srv, nil)
			}
			params := &gomcp.CallToolParams{Name: "probe", Arguments: map[string]any{}}
			if !tc.inHeader {
				params.Meta = gomcp.Meta{"traceparent": tp}
			}
			res, err := cs.CallTool(ctx, params)
			if err != nil || res.IsError {
				t.Fatalf("call: %v %+v", err, res)
			}
			sc := <-seen
			if sc.TraceID().String() != traceID {
				t.Fatalf("the tool ran in trace %s, want the caller's %s", sc.TraceID(), traceID)
			}
			if !tc.traced {
				if sc.SpanID().String() != spanID || !sc.IsRemote() {
					t.Errorf("the tool's span context %v, want the caller's span %s itself", sc, spanID)
				}
				if n := len(mem.GetSpans()); n != 0 {
					t.Errorf("%d spans made without a tracer provider", n)
				}
				return
			}
			var served *testkit.Span
			spans := testkit.SpansFromStubs(mem.GetSpans(), "")
			for i, s := range spans {
				if s.Name == "tools/call probe" {
					served = &spans[i]
				}
			}
			if served == nil {
				t.Fatalf("no tools/call span:\n%s", testkit.Tree(spans))
			}
			wantTransport := map[bool]string{false: "pipe", true: "tcp"}[tc.http]
			if served.Kind != "server" || served.ParentID != spanID || served.TraceID != traceID || sc.SpanID().String() != served.SpanID ||
				served.Attrs["mcp.method.name"] != "tools/call" || served.Attrs["gen_ai.tool.name"] != "probe" ||
				served.Attrs["network.transport"] != wantTransport || served.Attrs["mcp.protocol.version"] == "" {
				t.Errorf("served span %+v (tool in span %s): want a SERVER child of %s in the MCP conventions", *served, sc.SpanID(), spanID)
			}
			if tc.http && served.Attrs["mcp.session.id"] == "" {
				t.Errorf("served span over HTTP has no mcp.session.id: %v", served.Attrs)
			}
		})
	}
}
