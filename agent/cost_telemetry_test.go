package agent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// TestTelemetryUsageAndCost checks the usage classes, the cost, the
// temperature and the provider's address on the spans, and the cost
// metric.
func TestTelemetryUsageAndCost(t *testing.T) {
	usage := llm.Usage{InputTokens: 10_000, CacheReadTokens: 6_000, CacheWriteTokens: 1_000, OutputTokens: 2_000, ReasoningTokens: 500}
	temp := 0.25
	for _, tc := range []struct {
		name, model, endpoint string
		usage                 llm.Usage
		chat, run             map[string]string // attribute → value ("-": absent)
		metric                float64
	}{
		{name: "priced, with every class", model: "anthropic/claude-sonnet-4-5", endpoint: "https://api.example.test:8443/v1", usage: usage,
			chat: map[string]string{"gen_ai.usage.input_tokens": "10000", "gen_ai.usage.output_tokens": "2000",
				"gen_ai.usage.cache_read.input_tokens": "6000", "gen_ai.usage.cache_creation.input_tokens": "1000",
				"gen_ai.usage.reasoning.output_tokens": "500", "switchboard.usage.cost": "0.04455",
				"gen_ai.request.temperature": "0.25", "server.address": "api.example.test", "server.port": "8443"},
			// Two turns.
			run: map[string]string{"gen_ai.usage.input_tokens": "20000", "gen_ai.usage.cache_read.input_tokens": "12000",
				"gen_ai.usage.reasoning.output_tokens": "1000", "switchboard.usage.cost": "0.0891"},
			metric: 0.0891},
		{name: "unpriced, no cache, default port", model: "acme/unknown", endpoint: "https://llm.example.test",
			usage: llm.Usage{InputTokens: 100, OutputTokens: 10},
			chat: map[string]string{"gen_ai.usage.input_tokens": "100", "gen_ai.usage.cache_read.input_tokens": "-",
				"gen_ai.usage.cache_creation.input_tokens": "-", "gen_ai.usage.reasoning.output_tokens": "-",
				"switchboard.usage.cost": "-", "server.address": "llm.example.test", "server.port": "443"},
			run: map[string]string{"switchboard.usage.cost": "-"}},
		{name: "no endpoint", model: "openai/gpt-4o-mini", usage: llm.Usage{InputTokens: 1000, OutputTokens: 100},
			// 1,000 × $0.15 + 100 × $0.60 = $0.00021.
			chat: map[string]string{"server.address": "-", "server.port": "-", "switchboard.usage.cost": "0.00021"},
			run:  map[string]string{"switchboard.usage.cost": "0.00042"}, metric: 0.00042},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tp, exp := testkit.Tracing(t)
			reader := sdkmetric.NewManualReader()
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
			t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
			m := &metered{inner: llm.NewScripted(llm.Calls(llm.CallTool("c1", "echo", nil)), llm.Say("done")),
				name: tc.model, usage: tc.usage, endpoint: tc.endpoint}
			a := newAgent(t, agent.Config{Name: "coster", Model: m, Tools: []agent.Tool{echoTool("echo", nil)}, Temperature: &temp,
				Telemetry: agent.Telemetry{TracerProvider: tp, MeterProvider: mp}})
			if _, err := a.Run(testkit.Ctx(t, 10*time.Second), "go"); err != nil {
				t.Fatal(err)
			}
			spans := testkit.SpansFromStubs(exp.GetSpans(), "")
			_, bare, _ := strings.Cut(tc.model, "/")
			check := func(name string, want map[string]string) {
				s := spanByName(t, spans, name)
				for k, v := range want {
					got, ok := s.Attrs[k]
					if (v == "-" && ok) || (v != "-" && got != v) {
						t.Errorf("%s: %s = %q (set %v), want %q", name, k, got, ok, v)
					}
				}
			}
			check("chat "+bare, tc.chat)
			check("invoke_agent coster", tc.run)
			var rm metricdata.ResourceMetrics
			if err := reader.Collect(context.Background(), &rm); err != nil {
				t.Fatal(err)
			}
			var cost float64
			for _, sm := range rm.ScopeMetrics {
				for _, mt := range sm.Metrics {
					if mt.Name == "switchboard.model.cost" {
						for _, dp := range mt.Data.(metricdata.Sum[float64]).DataPoints {
							cost += dp.Value
						}
					}
				}
			}
			if diff := cost - tc.metric; diff > 1e-12 || diff < -1e-12 {
				t.Errorf("switchboard.model.cost sums to %v, want %v", cost, tc.metric)
			}
		})
	}
}
