package a2a

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/internal/telemetry"
	"github.com/switchboard-dev/switchboard/llm"
)

// requestCounts reads the switchboard.a2a.server.requests counter as
// "<endpoint> <error.type>" -> count.
func requestCounts(t *testing.T, r sdkmetric.Reader) map[string]int64 {
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != telemetry.MetricA2ARequests {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				ep, _ := dp.Attributes.Value(telemetry.KeyA2AMethod)
				kind, _ := dp.Attributes.Value(telemetry.KeyErrorType)
				out[ep.AsString()+" "+kind.AsString()] += dp.Value
			}
		}
	}
	return out
}

// TestRequestMetricKinds: the server counts its requests with the served
// agent's meter provider (not otel's global one), each with the failure
// kind of its outcome as error.type, absent on success: handler errors on
// both bindings, JSON-RPC errors answered before the handler, and HTTP
// error statuses.
func TestRequestMetricKinds(t *testing.T) {
	ctx := ctxT(t)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	ag, err := agent.New(ctx, agent.Config{Name: "echo", Model: llm.NewCyclic(llm.Say("hi")),
		Telemetry: agent.Telemetry{MeterProvider: mp}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(ctx, ServerConfig{Agent: ag, Auth: &Auth{BearerTokens: map[string]string{"tok": "alice"}}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.Close(); _ = srv.Close() })

	rpc := func(body string) string {
		return `{"jsonrpc":"2.0","id":1,` + body + `}`
	}
	tests := []struct {
		name, method, path, body, token string
		want                            string // "<endpoint> <kind>"
	}{
		{"card", http.MethodGet, cardPath, "", "", "card "},
		{"send", http.MethodPost, jsonrpcPath, rpc(`"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"x"}]}}`), "tok", "jsonrpc "},
		{"stream", http.MethodPost, jsonrpcPath, rpc(`"method":"SendStreamingMessage","params":{"message":{"messageId":"m2","role":"ROLE_USER","parts":[{"text":"x"}]}}`), "tok", "jsonrpc "},
		{"unknown task over JSON-RPC", http.MethodPost, jsonrpcPath, rpc(`"method":"GetTask","params":{"id":"nope"}`), "tok", "jsonrpc not_found"},
		{"unknown task over REST", http.MethodGet, restPath + "/tasks/nope", "", "tok", "rest not_found"},
		{"unknown method", http.MethodPost, jsonrpcPath, rpc(`"method":"NoSuchMethod","params":{}`), "tok", "jsonrpc protocol"},
		{"not JSON", http.MethodPost, jsonrpcPath, "{not json", "tok", "jsonrpc protocol"},
		{"no credentials", http.MethodPost, jsonrpcPath, rpc(`"method":"GetTask","params":{"id":"nope"}`), "", "jsonrpc permission_denied"},
	}
	want := map[string]int64{}
	for _, tc := range tests {
		req, _ := http.NewRequestWithContext(ctx, tc.method, hs.URL+tc.path, strings.NewReader(tc.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", "1.0")
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		resp, err := hs.Client().Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if tc.want == "jsonrpc " && !strings.Contains(string(body), "TASK_STATE_COMPLETED") {
			t.Fatalf("%s through the metered writer: %s", tc.name, body)
		}
		want[tc.want]++
		got := requestCounts(t, reader)
		for k, n := range want {
			if got[k] != n {
				t.Fatalf("after %s: counts %v, want %v", tc.name, got, want)
			}
		}
	}
}
