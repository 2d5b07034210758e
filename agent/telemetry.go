package agent

import (
	"context"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/telemetry"
	"github.com/switchboard-dev/switchboard/llm"
)

// Telemetry configures OpenTelemetry traces and metrics (see
// docs/observability.md). The zero value uses the global providers, looked
// up at each run, and costs nothing while they are otel's no-op defaults.
// The run's span travels in the context of every tool call, so MCP
// servers, A2A peers and bus workers continue the same trace.
type Telemetry struct {
	// TracerProvider makes the spans (nil: otel's global provider).
	TracerProvider trace.TracerProvider
	// MeterProvider makes the metrics (nil: otel's global provider).
	MeterProvider metric.MeterProvider
	// RecordContent adds the run's input and answer, and tool arguments and
	// results, to the spans. Off by default: they may hold personal data.
	RecordContent bool
}

// Telemetry is the agent's telemetry configuration: a workflow of agents
// makes its own spans with the first step's.
func (a *Agent) Telemetry() Telemetry { return a.cfg.Telemetry }

// source resolves the configured providers.
func (t Telemetry) source() *telemetry.Source {
	return telemetry.NewSource(t.TracerProvider, t.MeterProvider, t.RecordContent)
}

// runTrace is a run's telemetry (zero: off).
type runTrace struct {
	t  *telemetry.Telemetry
	op *telemetry.Op
}

// traceStart opens the run's invoke_agent span; the run's context carries it.
func (r *run) traceStart(input, pausedAt string) {
	t := r.a.tel.Get()
	if t == nil {
		if t = telemetry.Carried(r.ctx); t == nil {
			return
		}
	}
	parent := ""
	if r.parent != nil {
		parent = r.parent.Run
	}
	r.trace.t = t
	r.ctx, r.trace.op = t.StartAgent(telemetry.With(r.ctx, t), r.a.cfg.Name, r.id, parent,
		r.a.cfg.Model.Name(), input, telemetry.ParseTraceParent(pausedAt))
	if r.s != nil && r.trace.op.Recording() {
		r.trace.op.Conversation(r.conversationID())
	}
	if !r.trace.op.Recording() {
		// An unsampled run (its span does not record): its turns and calls
		// make no spans of their own, only metrics, and its context
		// propagates the run's unsampled span context.
		r.trace.t = t.Quiet()
	}
}

// traceEnd closes the run's span.
func (r *run) traceEnd(err error) {
	op := r.trace.op
	if op == nil {
		return
	}
	op.Usage(r.sinkCtx, telTokens(r.ans.Usage))
	if r.ans.Cost.Known() {
		op.Cost(r.sinkCtx, r.ans.Cost.USD.Float64())
	}
	op.Output(r.ans.Text)
	op.End(r.sinkCtx, kindOf(err))
}

// kindOf is the error.type of err: its failure kind, "" for nil.
func kindOf(err error) string {
	if err == nil {
		return ""
	}
	return failure.From(err).Kind.String()
}

// traceChat runs one model turn under a chat span.
func (r *run) traceChat(ctx context.Context, hist []llm.Message, defs []llm.ToolDef, onText func(string)) (*llm.Response, error) {
	if r.trace.t == nil {
		return r.modelTurn(ctx, hist, defs, onText)
	}
	ctx, op := r.trace.t.StartChat(ctx, r.a.cfg.Model.Name(), llm.CapabilitiesOf(r.a.cfg.Model).Endpoint)
	op.Request(r.a.cfg.MaxTokens, r.a.cfg.Temperature)
	resp, err := r.modelTurn(ctx, hist, defs, onText)
	if resp != nil {
		op.Usage(ctx, telTokens(resp.Usage))
		if c := r.a.turnCost(resp); c.Known() {
			op.Cost(ctx, c.USD.Float64())
		}
		op.Response(resp.Model, resp.ID, resp.StopReason)
	}
	op.End(ctx, kindOf(r.modelFailure(err)))
	return resp, err
}

// traceAttempt marks an attempt of the operation ctx is in (retries become
// span events).
func (r *run) traceAttempt(ctx context.Context) {
	if r.trace.t != nil {
		telemetry.Attempt(ctx)
	}
}

// tracedExecCall is execCall under an execute_tool span, with the
// permission decision and an open circuit as events.
func (r *run) tracedExecCall(bctx context.Context, c llm.ToolCall, tool Tool, spec ToolSpec, info *CallInfo, perm Permission, cs *callState) (*Result, *failure.Outcome) {
	t := r.trace.t
	if t == nil {
		return r.execCall(bctx, c, tool, spec, info, perm, cs)
	}
	ctx, op := t.StartTool(bctx, c.Name, c.ID, string(spec.Source.Kind), spec.Source.Name)
	if perm != Allow {
		op.Event(telemetry.EventPermission, telemetry.KeyPermission, string(perm))
	}
	res, o := r.execCall(ctx, c, tool, spec, info, perm, cs)
	kind := ""
	if o != nil {
		fe := o.Err
		kind = fe.Kind.String()
		switch fe.Kind {
		case failure.Unavailable:
			if op.Recording() {
				op.Event(telemetry.EventCircuit, telemetry.KeyCircuitKey, sourceKey(spec).String())
			}
		case failure.PermissionDenied, failure.Declined:
			op.Event(telemetry.EventPermission, telemetry.KeyPermission, kind)
		}
	}
	if t.Content() && op.Recording() {
		text := ""
		if res != nil {
			text = res.Text()
		}
		op.ToolContent(string(info.Args), text)
	}
	op.End(ctx, kind)
	return res, o
}

// traceRefused records a call refused before it ran (unknown tool, invalid
// arguments, budget) as an execute_tool span with its error.type.
func (r *run) traceRefused(c llm.ToolCall, spec ToolSpec, fe *failure.Error) {
	if t := r.trace.t; t != nil {
		if fe.Kind == failure.UnknownTool {
			// A name the model made up is an attribute, not a span name.
			ctx, op := t.StartUnknownTool(r.ctx, c.Name, c.ID)
			op.End(ctx, fe.Kind.String())
			return
		}
		ctx, op := t.StartTool(r.ctx, c.Name, c.ID, string(spec.Source.Kind), spec.Source.Name)
		op.End(ctx, fe.Kind.String())
	}
}

// conversationID is the session's gen_ai.conversation.id: its id, else
// one made for the traces at its first recorded run, so that the runs of
// one conversation share it.
func (s *Session) conversationID() string {
	if s.id != "" {
		return s.id
	}
	s.conv.Do(func() { s.cid = randomID("conv_") })
	return s.cid
}

// telTokens is u in the telemetry's terms.
func telTokens(u llm.Usage) telemetry.Tokens {
	return telemetry.Tokens{Input: u.InputTokens, Output: u.OutputTokens, CacheRead: u.CacheReadTokens,
		CacheWrite: u.CacheWriteTokens, Reasoning: u.ReasoningTokens}
}
