package bus_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/internal/testkit"
)

// TestTraceContextOverTheBus: a request's responder continues the
// requester's span, and a published event carries its traceparent header.
func TestTraceContextOverTheBus(t *testing.T) {
	b := newBus(t, bus.Config{})
	ctx := testkit.Ctx(t, 20*time.Second)
	tp, _ := testkit.Tracing(t)
	sctx, span := tp.Tracer("test").Start(ctx, "caller")
	defer span.End()
	want := span.SpanContext()

	seen := make(chan trace.SpanContext, 1)
	svc, err := b.ServeElicitation(ctx, agent.ElicitorFunc(func(ctx context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
		seen <- trace.SpanContextFromContext(ctx)
		return agent.ElicitationResult{Action: agent.ElicitAccept}, nil
	}), bus.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	if _, err := b.Elicitor().Elicit(sctx, agent.Elicitation{Run: "run_1", Kind: agent.ElicitPermission, Message: "ok?"}); err != nil {
		t.Fatal(err)
	}
	if got := <-seen; got.TraceID() != want.TraceID() || got.SpanID() != want.SpanID() || !got.IsRemote() {
		t.Errorf("the responder's span context %v, want the requester's %v", got, want)
	}

	sub, err := b.Conn().SubscribeSync(bus.SubjectsOf(b).Events("run_1"))
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	b.Emit(sctx, agent.Event{Type: agent.EventRunStarted, Run: "run_1"})
	msg, err := sub.NextMsg(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if tp := msg.Header.Get("traceparent"); tp != "00-"+want.TraceID().String()+"-"+want.SpanID().String()+"-01" {
		t.Errorf("event header traceparent %q", tp)
	}
}
