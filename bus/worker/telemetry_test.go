package worker_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/worker"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// TestTraceCrossesThePool: an agent calls a pool as a tool; the worker's
// run is a child of the caller's execute_tool span, through the job's NATS
// headers.
func TestTraceCrossesThePool(t *testing.T) {
	tp, exp := testkit.Tracing(t)
	b := newBus(t, bus.Config{})
	remote, err := agent.New(context.Background(), agent.Config{Name: "step", Model: llm.NewCyclic(llm.Say("stepped")),
		Telemetry: agent.Telemetry{TracerProvider: tp}})
	if err != nil {
		t.Fatal(err)
	}
	serve(t, b, remote, worker.ServeConfig{})
	pool := newPool(t, b, "step", worker.PoolConfig{})
	caller, err := agent.New(context.Background(), agent.Config{Name: "caller", Tools: []agent.Tool{stepTool(t, pool)},
		Permissions: agent.AllowAll(), Policy: fastPolicy(), Telemetry: agent.Telemetry{TracerProvider: tp},
		Model: llm.NewScripted(llm.Calls(llm.CallTool("c1", "step", map[string]any{"input": "x"})), llm.Say("ok"))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := caller.Run(testkit.Ctx(t, 20*time.Second), "go"); err != nil {
		t.Fatal(err)
	}
	chat := "chat " + llm.NewScripted().Name()
	// The start request is a PRODUCER span (send step), its handling on
	// the worker a CONSUMER span (process step), the worker's run its child.
	want := "invoke_agent caller\n  " + chat + "\n  execute_tool step\n    send step\n      process step\n        invoke_agent step\n          " +
		chat + "\n  " + chat + "\n"
	// The worker answers before its run's span ends: wait (at most 5 s)
	// for the tree to be whole.
	var got string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if got = testkit.Tree(testkit.SpansFromStubs(exp.GetSpans(), "")); got == want || time.Now().After(deadline) {
			break
		}
	}
	if got != want {
		t.Fatalf("span tree:\n%s\nwant:\n%s", got, want)
	}
	for _, s := range exp.GetSpans() {
		wantKind := map[string]trace.SpanKind{"send step": trace.SpanKindProducer, "process step": trace.SpanKindConsumer}[s.Name]
		if wantKind != trace.SpanKindUnspecified && (s.SpanKind != wantKind || !slices.ContainsFunc(s.Attributes, func(kv attribute.KeyValue) bool {
			return kv.Key == "messaging.destination.name" && kv.Value.AsString() == "step"
		})) {
			t.Errorf("span %q: kind %v, attributes %v; want %v with messaging.destination.name=step", s.Name, s.SpanKind, s.Attributes, wantKind)
		}
	}
}
