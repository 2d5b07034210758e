package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// spanByName returns the first span named name.
func spanByName(t *testing.T, spans []testkit.Span, name string) testkit.Span {
	t.Helper()
	for _, s := range spans {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no span %q in:\n%s", name, testkit.Tree(spans))
	return testkit.Span{}
}

func TestTelemetrySpans(t *testing.T) {
	chat := "chat " + llm.NewScripted().Name()
	cases := []struct {
		name    string
		latest  bool
		content bool
		tools   func(seen *atomic.Value, fails *atomic.Int32) []agent.Tool
		perms   *agent.Permissions
		steps   []llm.Step
		tree    string
		// want: span name -> attribute -> value ("*": present; "-": absent)
		want   map[string]map[string]string
		events map[string][]string
	}{
		{
			name:  "one call, 1.36 attributes",
			steps: []llm.Step{llm.Calls(llm.CallTool("c1", "echo", map[string]any{"x": 1})), llm.Say("done")},
			tree:  "invoke_agent tracer\n  " + chat + "\n  execute_tool echo\n  " + chat + "\n",
			want: map[string]map[string]string{
				"invoke_agent tracer": {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "tracer",
					"gen_ai.system": "switchboard", "gen_ai.provider.name": "-", "gen_ai.usage.input_tokens": "*",
					"switchboard.run.id": "*", "gen_ai.output.messages": "-"},
				chat: {"gen_ai.operation.name": "chat", "gen_ai.request.model": llm.NewScripted().Name(),
					"gen_ai.usage.input_tokens": "*", "gen_ai.usage.output_tokens": "*"},
				"execute_tool echo": {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "echo",
					"gen_ai.tool.call.id": "c1", "gen_ai.tool.type": "function", "switchboard.tool.source": "tool",
					"error.type": "-", "gen_ai.tool.call.arguments": "-"},
			},
		},
		{
			name: "latest conventions with content", latest: true, content: true,
			steps: []llm.Step{llm.Calls(llm.CallTool("c1", "echo", map[string]any{"x": 1})), llm.Say("done")},
			tree:  "invoke_agent tracer\n  " + chat + "\n  execute_tool echo\n  " + chat + "\n",
			want: map[string]map[string]string{
				"invoke_agent tracer": {"gen_ai.provider.name": "switchboard", "gen_ai.system": "-",
					"gen_ai.input.messages":  `[{"parts":[{"content":"go","type":"text"}],"role":"user"}]`,
					"gen_ai.output.messages": `[{"parts":[{"content":"done","type":"text"}],"role":"assistant"}]`},
				"execute_tool echo": {"gen_ai.tool.call.arguments": `{"x":1}`, "gen_ai.tool.call.result": `echo {"x":1}`},
			},
		},
		{
			name: "retry, failure and denial",
			tools: func(_ *atomic.Value, fails *atomic.Int32) []agent.Tool {
				flaky := tool("flaky", func(context.Context, json.RawMessage) (*agent.Result, error) {
					if fails.Add(1) == 1 {
						return nil, &failure.Error{Kind: failure.Transient, Source: failure.SourceTool, Message: "reset"}
					}
					return agent.TextResult("ok"), nil
				})
				broken := tool("broken", func(context.Context, json.RawMessage) (*agent.Result, error) {
					return nil, &failure.Error{Kind: failure.Protocol, Source: failure.SourceTool, Message: "garbage"}
				})
				return []agent.Tool{flaky, broken, echoTool("forbidden", nil)}
			},
			perms: &agent.Permissions{Rules: []agent.Rule{{Tool: "forbidden", Permission: agent.Deny}, {Tool: "*", Permission: agent.Allow}}},
			steps: []llm.Step{llm.Calls(llm.CallTool("c1", "flaky", nil)), llm.Calls(llm.CallTool("c2", "broken", nil)),
				llm.Calls(llm.CallTool("c3", "forbidden", nil)), llm.Calls(llm.CallTool("c4", "missing", nil)), llm.Say("done")},
			tree: "invoke_agent tracer\n  " + chat + "\n  execute_tool flaky\n  " + chat + "\n  execute_tool broken\n  " +
				chat + "\n  execute_tool forbidden\n  " + chat + "\n  execute_tool unknown_tool\n  " + chat + "\n",
			want: map[string]map[string]string{
				"execute_tool flaky":     {"error.type": "-"},
				"execute_tool broken":    {"error.type": "protocol"},
				"execute_tool forbidden": {"error.type": "permission_denied"},
				// a made-up name is an attribute, not a span name
				"execute_tool unknown_tool": {"error.type": "unknown_tool", "gen_ai.tool.call.id": "c4", "gen_ai.tool.name": "missing"},
			},
			events: map[string][]string{
				"execute_tool flaky":     {"switchboard.retry"},
				"execute_tool forbidden": {"switchboard.permission", "switchboard.permission"},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.latest {
				t.Setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "http,gen_ai_latest_experimental")
			}
			tp, exp := testkit.Tracing(t)
			var seen atomic.Value
			var fails atomic.Int32
			tools := []agent.Tool{tool("echo", func(ctx context.Context, args json.RawMessage) (*agent.Result, error) {
				seen.Store(trace.SpanContextFromContext(ctx))
				return agent.TextResult("echo " + string(args)), nil
			})}
			if tc.tools != nil {
				tools = tc.tools(&seen, &fails)
			}
			a := newAgent(t, agent.Config{Name: "tracer", Model: llm.NewScripted(tc.steps...), Tools: tools,
				Permissions: tc.perms, Telemetry: agent.Telemetry{TracerProvider: tp, RecordContent: tc.content}})
			if _, err := a.Run(testkit.Ctx(t, 10*time.Second), "go"); err != nil {
				t.Fatal(err)
			}
			spans := testkit.SpansFromStubs(exp.GetSpans(), "")
			if got := testkit.Tree(spans); got != tc.tree {
				t.Fatalf("span tree:\n%s\nwant:\n%s", got, tc.tree)
			}
			for _, s := range spans {
				if s.TraceID != spans[0].TraceID {
					t.Errorf("span %q is in trace %s, not %s", s.Name, s.TraceID, spans[0].TraceID)
				}
			}
			for name, attrs := range tc.want {
				s := spanByName(t, spans, name)
				for k, v := range attrs {
					got, ok := s.Attrs[k]
					switch {
					case v == "-" && ok:
						t.Errorf("%s: attribute %s = %q, want none", name, k, got)
					case v == "*" && !ok, v != "-" && v != "*" && got != v:
						t.Errorf("%s: attribute %s = %q (set %v), want %q", name, k, got, ok, v)
					}
				}
			}
			for name, evs := range tc.events {
				if got := spanByName(t, spans, name).Events; strings.Join(got, ",") != strings.Join(evs, ",") {
					t.Errorf("%s: events %v, want %v", name, got, evs)
				}
			}
			if sc, ok := seen.Load().(trace.SpanContext); ok {
				if want := spanByName(t, spans, "execute_tool echo").SpanID; sc.SpanID().String() != want {
					t.Errorf("the tool's context carries span %s, want the execute_tool span %s", sc.SpanID(), want)
				}
			}
		})
	}
}

func TestTelemetryMetrics(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	broken := tool("broken", func(context.Context, json.RawMessage) (*agent.Result, error) {
		return nil, &failure.Error{Kind: failure.Protocol, Source: failure.SourceTool, Message: "garbage"}
	})
	a := newAgent(t, agent.Config{Name: "m", Tools: []agent.Tool{echoTool("echo", nil), broken},
		Model: llm.NewScripted(llm.Calls(llm.CallTool("c1", "echo", nil), llm.CallTool("c2", "broken", nil)),
			llm.Calls(llm.CallTool("c3", "echo", nil)), llm.Say("done")),
		Telemetry: agent.Telemetry{MeterProvider: mp}})
	ans, err := a.Run(testkit.Ctx(t, 10*time.Second), "go")
	if err != nil {
		t.Fatal(err)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	calls := map[string]int64{}
	var tokens, turns int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch m.Name {
			case "switchboard.tool.calls":
				for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
					kind, _ := dp.Attributes.Value("error.type")
					src, _ := dp.Attributes.Value("switchboard.tool.source")
					calls[src.AsString()+"/"+kind.AsString()] += dp.Value
				}
			case "gen_ai.client.token.usage":
				for _, dp := range m.Data.(metricdata.Histogram[int64]).DataPoints {
					tokens += dp.Sum
				}
			case "gen_ai.client.operation.duration":
				for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
					turns += int64(dp.Count)
				}
			}
		}
	}
	if want := int64(ans.Usage.Total()); tokens != want {
		t.Errorf("token usage sum %d, want the run's %d (%v)", tokens, want, ans.Usage)
	}
	if turns != int64(ans.Turns) {
		t.Errorf("operation duration counted %d chats, want %d", turns, ans.Turns)
	}
	if calls["tool/"] != 2 || calls["tool/protocol"] != 1 || len(calls) != 2 {
		t.Errorf("tool calls by source/kind %v, want tool/ 2 and tool/protocol 1", calls)
	}
}

func TestTelemetryLogHook(t *testing.T) {
	tp, exp := testkit.Tracing(t)
	var buf bytes.Buffer
	log := zerolog.New(&buf)
	broken := tool("broken", func(context.Context, json.RawMessage) (*agent.Result, error) {
		return nil, &failure.Error{Kind: failure.Protocol, Source: failure.SourceTool, Message: "garbage"}
	})
	a, err := agent.New(context.Background(), agent.Config{Name: "logs", Tools: []agent.Tool{broken}, Logger: &log,
		Permissions: agent.AllowAll(), Model: llm.NewScripted(llm.Calls(llm.CallTool("c1", "broken", nil)), llm.Say("done")),
		Telemetry: agent.Telemetry{TracerProvider: tp}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(testkit.Ctx(t, 10*time.Second), "go"); err != nil {
		t.Fatal(err)
	}
	var line struct{ TraceID, SpanID, Message string }
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]string
		_ = json.Unmarshal([]byte(l), &m)
		if m["message"] == "failure handled" {
			line.TraceID, line.SpanID, line.Message = m["trace_id"], m["span_id"], m["message"]
		}
	}
	tool := spanByName(t, testkit.SpansFromStubs(exp.GetSpans(), ""), "execute_tool broken")
	if line.TraceID != tool.TraceID || line.SpanID == "" {
		t.Errorf("the failure's log line has trace %q span %q, want trace %s; log:\n%s", line.TraceID, line.SpanID, tool.TraceID, buf.String())
	}
}

// TestTelemetryCircuit: a source failing until its circuit opens; the call
// refused by the open circuit has the circuit event, and the agent counts
// the state change it saw (here under the process default).
func TestTelemetryCircuit(t *testing.T) {
	testkit.SetDefault(t, failure.NewPolicy(failure.PolicyConfig{}))
	tp, exp := testkit.Tracing(t)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	broken := tool("broken", func(context.Context, json.RawMessage) (*agent.Result, error) {
		return nil, &failure.Error{Kind: failure.Protocol, Source: failure.SourceTool, Message: "garbage"}
	})
	var steps []llm.Step
	for i := range 6 { // the default policy opens a circuit after 5 failures
		steps = append(steps, llm.Calls(llm.CallTool(fmt.Sprintf("c%d", i), "broken", nil)))
	}
	a, err := agent.New(context.Background(), agent.Config{Tools: []agent.Tool{broken}, Permissions: agent.AllowAll(),
		Model: llm.NewScripted(append(steps, llm.Say("done"))...), Telemetry: agent.Telemetry{TracerProvider: tp, MeterProvider: mp}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(testkit.Ctx(t, 10*time.Second), "go"); err != nil {
		t.Fatal(err)
	}
	var last testkit.Span
	for _, s := range testkit.SpansFromStubs(exp.GetSpans(), "") {
		if s.Name == "execute_tool broken" && s.Attrs["gen_ai.tool.call.id"] == "c5" {
			last = s
		}
	}
	if last.Attrs["error.type"] != "unavailable" || strings.Join(last.Events, ",") != "switchboard.circuit_open" {
		t.Errorf("the call refused by the open circuit: attributes %v, events %v", last.Attrs, last.Events)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	opened := int64(0)
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == "switchboard.circuit.state_changes" {
				for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
					if st, _ := dp.Attributes.Value("switchboard.circuit.state"); st.AsString() == "open" {
						opened += dp.Value
					}
				}
			}
		}
	}
	if opened != 1 {
		t.Errorf("%d circuit openings counted, want 1", opened)
	}
}

// A run resumed from its checkpoint (here: a parked question answered by
// another Agent, as another process would) gets a new invoke_agent span
// that links to the span of the attempt that paused.
func TestTelemetryResumeLinksToPause(t *testing.T) {
	ctx := testkit.Ctx(t, 20*time.Second)
	tp, exp := testkit.Tracing(t)
	st := agent.NewMemoryStore(agent.MemoryStoreOptions{})
	l := newLedger()
	newAgent := func() *agent.Agent {
		a, err := agent.New(context.Background(), agent.Config{Name: "parker", Tools: durableTools(l),
			Model:       &planModel{final: "finished", steps: [][]llm.ToolCall{{call("p1", "pay", 1)}}},
			Permissions: &agent.Permissions{Rules: []agent.Rule{{Tool: "pay", Permission: agent.Ask}}},
			Policy:      testkit.FastPolicy(failure.PolicyConfig{}),
			Durable:     agent.Durability{Sessions: st, Runs: st, Inbox: st, ParkAfter: -1, QuestionTTL: time.Hour},
			Telemetry:   agent.Telemetry{TracerProvider: tp}})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	ans, err := newAgent().NewSession().Run(ctx, "pay it")
	if !errors.Is(err, failure.Parked) {
		t.Fatalf("run: %v; want Parked", err)
	}
	if _, err := newAgent().Answer(ctx, ans.Question, agent.ElicitationResult{Action: agent.ElicitAccept}); err != nil {
		t.Fatalf("answer: %v", err)
	}
	var runs []testkit.Span
	for _, s := range testkit.SpansFromStubs(exp.GetSpans(), "") {
		if s.Name == "invoke_agent parker" {
			runs = append(runs, s)
		}
	}
	if len(runs) != 2 {
		t.Fatalf("%d invoke_agent spans, want 2 (the paused attempt and the resumed one)", len(runs))
	}
	first, second := runs[0], runs[1]
	if first.Start.After(second.Start) {
		first, second = second, first
	}
	if len(second.Links) != 1 || second.Links[0] != first.SpanID {
		t.Fatalf("resumed span links %v, want [%s] (the paused attempt's span)", second.Links, first.SpanID)
	}
	if len(first.Links) != 0 {
		t.Fatalf("the first attempt links %v, want none", first.Links)
	}
	// Parking is a wait, not an error: the paused attempt's status stays
	// unset, with the switchboard.parked event and attribute; both attempts
	// name the session as their conversation.
	if _, ok := first.Attrs["error.type"]; ok || first.Attrs["switchboard.run.parked"] != "true" ||
		!slices.Contains(first.Events, "switchboard.parked") {
		t.Errorf("the parked attempt: attributes %v, events %v; want switchboard.run.parked, its event, no error.type", first.Attrs, first.Events)
	}
	for _, stub := range exp.GetSpans() {
		if stub.Name == "invoke_agent parker" && stub.Status.Code == codes.Error {
			t.Errorf("an invoke_agent span ended with status %v %q", stub.Status.Code, stub.Status.Description)
		}
	}
	if c := first.Attrs["gen_ai.conversation.id"]; c == "" || c != second.Attrs["gen_ai.conversation.id"] {
		t.Errorf("conversation ids %q and %q, want the session's in both", c, second.Attrs["gen_ai.conversation.id"])
	}
}
