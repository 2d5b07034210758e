package bus_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/bus"
	"github.com/switchboard-dev/switchboard/bus/internal/wire"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

func samplingRequest(text string) agent.SamplingRequest {
	return agent.SamplingRequest{
		Run: "run_s", Source: agent.Provenance{Kind: failure.SourceMCP, Name: "everything"},
		Messages:  []llm.Message{{Role: llm.RoleUser, Text: text}},
		MaxTokens: 100,
	}
}

func TestSamplingRoundTrip(t *testing.T) {
	b := newBus(t, bus.Config{})
	ctx := ctxT(t, 20*time.Second)
	small := llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
		return llm.Say("small model saw: " + req.Messages[0].Text)
	}))
	big := llm.NewCyclic(llm.React(func(req *llm.Request) llm.Step {
		return llm.Say("big model (max " + itoa(req.MaxTokens) + "): " + req.Messages[0].Text)
	}))
	approvals := agent.ElicitorFunc(func(_ context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
		if e.Kind != agent.ElicitPermission || e.Tool != "sampling" {
			t.Errorf("approval asked with %+v", e)
		}
		if strings.Contains(e.Message, "everything") {
			return agent.ElicitationResult{Action: agent.ElicitAccept}, nil
		}
		return agent.ElicitationResult{Action: agent.ElicitDecline, Reason: "unknown server"}, nil
	})
	tests := []struct {
		name     string
		cfg      bus.ModelSamplerConfig
		req      agent.SamplingRequest
		wantText string
		wantKind failure.Kind
	}{
		{name: "allow", cfg: bus.ModelSamplerConfig{Model: small, Policy: agent.Allow},
			req: samplingRequest("hi"), wantText: "small model saw: hi"},
		{name: "hint picks a model and the cap clamps", cfg: bus.ModelSamplerConfig{Model: small, Policy: agent.Allow, MaxTokens: 50,
			Hints: []bus.ModelHint{{Hint: "claude", Model: big}}},
			req: func() agent.SamplingRequest {
				r := samplingRequest("hi")
				r.Preferences.Hints = []string{"claude-3-sonnet"}
				return r
			}(), wantText: "big model (max 50): hi"},
		{name: "ask approved", cfg: bus.ModelSamplerConfig{Model: small, Elicitor: approvals},
			req: samplingRequest("ok?"), wantText: "small model saw: ok?"},
		{name: "ask declined", cfg: bus.ModelSamplerConfig{Model: small, Elicitor: approvals},
			req: func() agent.SamplingRequest {
				r := samplingRequest("ok?")
				r.Source.Name = "stranger"
				return r
			}(), wantKind: failure.Declined},
		{name: "ask without a person", cfg: bus.ModelSamplerConfig{Model: small}, req: samplingRequest("x"), wantKind: failure.Declined},
		{name: "deny", cfg: bus.ModelSamplerConfig{Model: small, Policy: agent.Deny}, req: samplingRequest("x"), wantKind: failure.PermissionDenied},
		{name: "no messages", cfg: bus.ModelSamplerConfig{Model: small, Policy: agent.Allow}, req: agent.SamplingRequest{MaxTokens: 5}, wantKind: failure.InvalidArgs},
		{name: "model failure keeps its kind", cfg: bus.ModelSamplerConfig{Model: llm.NewScripted(), Policy: agent.Allow}, req: samplingRequest("x"), wantKind: failure.Model},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := bus.NewModelSampler(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			// Serial responders answer through micro, whose stats count errors.
			svc, err := b.ServeSampling(ctx, ms, bus.ServeOptions{MaxConcurrent: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer svc.Close()
			res, err := b.Sampler().Sample(ctx, tt.req)
			// micro counts a request after its handler returns, which is
			// after the reply went out.
			st := bus.ServiceStats(svc).Endpoints[0]
			testkit.WaitFor(t, 10*time.Second, "micro's count of the request", func() bool {
				st = bus.ServiceStats(svc).Endpoints[0]
				return st.NumRequests > 0
			})
			if tt.wantKind != failure.Unknown {
				wantKind(t, err, tt.wantKind)
				if st.NumRequests != 1 || st.NumErrors != 1 {
					t.Errorf("stats: %d requests, %d errors; want 1, 1", st.NumRequests, st.NumErrors)
				}
				return
			}
			if st.NumRequests != 1 || st.NumErrors != 0 {
				t.Errorf("stats: %d requests, %d errors; want 1, 0", st.NumRequests, st.NumErrors)
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != tt.wantText || res.Model != llm.NewScripted().Name() || res.Usage.Total() == 0 {
				t.Errorf("result = %+v, want text %q", res, tt.wantText)
			}
		})
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestModelSamplerBudget(t *testing.T) {
	ctx := ctxT(t, 10*time.Second)
	ms, err := bus.NewModelSampler(bus.ModelSamplerConfig{Model: llm.NewCyclic(llm.Say("one two three")), Policy: agent.Allow, TotalTokens: 5})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ms.Sample(ctx, samplingRequest("a b c d")); err != nil {
		t.Fatal(err)
	}
	if bus.SamplerUsed(ms) < 5 {
		t.Fatalf("Used() = %d after a 7-token answer", bus.SamplerUsed(ms))
	}
	_, err = ms.Sample(ctx, samplingRequest("again"))
	if !errorsIs(err, failure.Budget) {
		t.Fatalf("over budget: %v, want Budget", err)
	}
	if _, err := bus.NewModelSampler(bus.ModelSamplerConfig{}); !errorsIs(err, failure.Config) {
		t.Errorf("no model: %v, want Config", err)
	}
	if _, err := bus.NewModelSampler(bus.ModelSamplerConfig{Model: llm.NewScripted(), Policy: "maybe"}); !errorsIs(err, failure.Config) {
		t.Errorf("bad policy: %v, want Config", err)
	}
}

func TestElicitationRoundTrip(t *testing.T) {
	b := newBus(t, bus.Config{})
	ctx := ctxT(t, 20*time.Second)
	h := bus.NewElicitHandlers()
	svc, err := b.ServeElicitation(ctx, h, bus.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	el := b.Elicitor()
	form := agent.Elicitation{Kind: agent.ElicitForm, Run: "run_e", Message: "Your name?", Schema: json.RawMessage(`{"type":"object"}`)}

	// Nothing registered: a clear decline, not an error.
	res, err := el.Elicit(ctx, form)
	if err != nil {
		t.Fatal(err)
	}
	if res.Action != agent.ElicitDecline || !strings.Contains(res.Reason, `no handler is registered for "form"`) {
		t.Errorf("unregistered = %+v", res)
	}
	h.Handle(agent.ElicitForm, agent.ElicitorFunc(func(_ context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
		return agent.ElicitationResult{Action: agent.ElicitAccept, Content: map[string]any{"name": "Ada", "run": e.Run}}, nil
	}))
	h.HandleAll(agent.ElicitorFunc(func(_ context.Context, e agent.Elicitation) (agent.ElicitationResult, error) {
		if e.Kind == agent.ElicitURL {
			return agent.ElicitationResult{Action: agent.ElicitCancel}, nil
		}
		return agent.ElicitationResult{}, &failure.Error{Kind: failure.Timeout, Message: "the person did not answer"}
	}))
	tests := []struct {
		name     string
		e        agent.Elicitation
		want     agent.ElicitAction
		wantKind failure.Kind
	}{
		{"form accepted", form, agent.ElicitAccept, 0},
		{"url cancelled by fallback", agent.Elicitation{Kind: agent.ElicitURL, URL: "https://example.com/auth", ID: "e1"}, agent.ElicitCancel, 0},
		{"handler failure travels typed", agent.Elicitation{Kind: agent.ElicitInput, Run: "run_e", Message: "more?"}, "", failure.Timeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := el.Elicit(ctx, tt.e)
			if tt.wantKind != failure.Unknown {
				wantKind(t, err, tt.wantKind)
				if !strings.Contains(err.Error(), "the person did not answer") {
					t.Errorf("message lost: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Action != tt.want {
				t.Errorf("action = %s, want %s", res.Action, tt.want)
			}
			if tt.want == agent.ElicitAccept && (res.Content["name"] != "Ada" || res.Content["run"] != "run_e") {
				t.Errorf("content = %v", res.Content)
			}
		})
	}
	// The service counts a request after its reply is sent: the last one
	// may be counted a moment after its requester has the answer.
	st := bus.ServiceStats(svc)
	testkit.WaitFor(t, 10*time.Second, "micro's count of the four requests", func() bool {
		st = bus.ServiceStats(svc)
		return len(st.Endpoints) != 1 || st.Endpoints[0].NumRequests >= 4
	})
	if len(st.Endpoints) != 1 || st.Endpoints[0].NumRequests != 4 || st.Endpoints[0].QueueGroup != wire.QueueGroup {
		t.Errorf("micro stats = %+v", st.Endpoints[0])
	}
}

func TestQueueGroupSharesLoad(t *testing.T) {
	b := newBus(t, bus.Config{Listen: "127.0.0.1:0"})
	ctx := ctxT(t, 30*time.Second)
	var counts [2]atomic.Int64
	for i := range counts {
		i := i
		s := testkit.SamplerFunc(func(ctx context.Context, req agent.SamplingRequest) (agent.SamplingResult, error) {
			counts[i].Add(1)
			return agent.SamplingResult{Model: "responder-" + itoa(i), Text: req.Messages[0].Text}, nil
		})
		// Each responder has its own connection, as separate processes would.
		rb := newBus(t, bus.Config{URLs: []string{b.ClientURL()}})
		svc, err := rb.ServeSampling(ctx, s, bus.ServeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer svc.Close()
	}
	const n = 200
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := b.Sampler().Sample(ctx, samplingRequest("q")); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	a, c := counts[0].Load(), counts[1].Load()
	if a+c != n {
		t.Fatalf("answered %d+%d, want %d in total (each request exactly once)", a, c, n)
	}
	if a < n/10 || c < n/10 {
		t.Errorf("load not shared: %d vs %d", a, c)
	}
}

func TestRequestFailuresAreTyped(t *testing.T) {
	// A high breaker threshold: each case must show its own kind, not the
	// open circuit that repeated failures lead to.
	b := newBus(t, bus.Config{Policy: failure.NewPolicy(failure.PolicyConfig{BreakerFailures: 100, InitialBackoff: time.Millisecond})})
	nc := b.Conn()
	subj := bus.SubjectsOf(b)
	tests := []struct {
		name  string
		reply func(m *nats.Msg) // nil: no responder
		ctx   time.Duration
		kind  failure.Kind
	}{
		{name: "no responder", kind: failure.Unavailable},
		{name: "timeout", reply: func(*nats.Msg) {}, ctx: 300 * time.Millisecond, kind: failure.Timeout},
		{name: "malformed reply", reply: func(m *nats.Msg) { m.Respond([]byte(`{"v":1,"result":`)) }, kind: failure.Protocol},
		{name: "wrong version", reply: func(m *nats.Msg) { m.Respond([]byte(`{"v":2,"result":{"model":"m","text":"t"}}`)) }, kind: failure.Protocol},
		{name: "no version", reply: func(m *nats.Msg) { m.Respond([]byte(`{"result":{"model":"m","text":"t"}}`)) }, kind: failure.Protocol},
		{name: "empty reply", reply: func(m *nats.Msg) { m.Respond([]byte(`{"v":1}`)) }, kind: failure.Protocol},
		{name: "micro error without body", reply: func(m *nats.Msg) {
			r := nats.NewMsg(m.Reply)
			r.Header.Set("Nats-Service-Error", "overloaded")
			r.Header.Set("Nats-Service-Error-Code", "transient")
			nc.PublishMsg(r)
		}, kind: failure.Transient},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.reply != nil {
				sub, err := nc.QueueSubscribe(subj.Sampling(), wire.QueueGroup, tt.reply)
				if err != nil {
					t.Fatal(err)
				}
				defer sub.Unsubscribe()
				nc.Flush()
			}
			d := tt.ctx
			if d == 0 {
				d = 10 * time.Second
			}
			ctx := ctxT(t, d)
			_, err := b.Sampler().Sample(ctx, samplingRequest("x"))
			wantKind(t, err, tt.kind)
		})
	}
	// Elicitation with no responder: Unavailable too.
	_, err := b.Elicitor().Elicit(ctxT(t, 5*time.Second), agent.Elicitation{Kind: agent.ElicitInput, Run: "r"})
	wantKind(t, err, failure.Unavailable)
	// An elicitation reply with an unknown action is malformed.
	sub, _ := nc.Subscribe(subj.Elicit("r2"), func(m *nats.Msg) { m.Respond([]byte(`{"v":1,"result":{"action":"maybe"}}`)) })
	defer sub.Unsubscribe()
	nc.Flush()
	_, err = b.Elicitor().Elicit(ctxT(t, 5*time.Second), agent.Elicitation{Kind: agent.ElicitInput, Run: "r2"})
	wantKind(t, err, failure.Protocol)
}

func TestResponderRejectsMalformedRequest(t *testing.T) {
	pol := &countingPolicy{Policy: failure.NewPolicy(failure.PolicyConfig{})}
	b := newBus(t, bus.Config{Policy: pol})
	ctx := ctxT(t, 10*time.Second)
	ms, _ := bus.NewModelSampler(bus.ModelSamplerConfig{Model: llm.NewCyclic(llm.Say("x")), Policy: agent.Allow})
	svc, err := b.ServeSampling(ctx, ms, bus.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	for _, payload := range []string{`not json`, `{"v":9,"request":{}}`} {
		msg, err := b.Conn().RequestWithContext(ctx, bus.SubjectsOf(b).Sampling(), []byte(payload))
		if err != nil {
			t.Fatal(err)
		}
		if msg.Header.Get("Nats-Service-Error-Code") != "protocol" {
			t.Errorf("%s: error code header = %q", payload, msg.Header.Get("Nats-Service-Error-Code"))
		}
		_, err = wire.DecodeReply[agent.SamplingResult](msg.Data, "decode sampling reply")
		if !errorsIs(err, failure.Protocol) {
			t.Errorf("%s: reply decodes to %v, want a Protocol failure", payload, err)
		}
	}
	if n := len(pol.messages()); n != 2 {
		t.Errorf("responder handled %d failures, want 2", n)
	}
}

func TestResponderHonoursRequestDeadline(t *testing.T) {
	b := newBus(t, bus.Config{})
	ctx := ctxT(t, 20*time.Second)
	sawDeadline := make(chan time.Duration, 1)
	svc, err := b.ServeElicitation(ctx, agent.ElicitorFunc(func(ctx context.Context, _ agent.Elicitation) (agent.ElicitationResult, error) {
		dl, _ := ctx.Deadline()
		sawDeadline <- time.Until(dl)
		<-ctx.Done() // a person who never answers
		return agent.ElicitationResult{}, ctx.Err()
	}), bus.ServeOptions{Run: "run_d"})
	if err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	_, err = b.Elicitor().Elicit(rctx, agent.Elicitation{Kind: agent.ElicitInput, Run: "run_d"})
	wantKind(t, err, failure.Timeout)
	if d := <-sawDeadline; d > time.Second {
		t.Errorf("responder's deadline is %s away, want the requester's (<=500ms)", d)
	}
	// Close waits for the handler, which ends at the propagated deadline.
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestServiceStop(t *testing.T) {
	b := newBus(t, bus.Config{})
	ctx := ctxT(t, 20*time.Second)
	started := make(chan struct{})
	svc, err := b.ServeSampling(ctx, testkit.SamplerFunc(func(ctx context.Context, _ agent.SamplingRequest) (agent.SamplingResult, error) {
		close(started)
		<-ctx.Done() // a slow model call
		return agent.SamplingResult{}, ctx.Err()
	}), bus.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := b.Sampler().Sample(ctx, samplingRequest("x"))
		errc <- err
	}()
	<-started
	// Close gives the in-flight handler its grace, then cancels it, and its
	// requester gets a typed answer instead of waiting for its deadline.
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}
	wantKind(t, <-errc, failure.Canceled)
	// Nobody serves any more.
	_, err = b.Sampler().Sample(ctx, samplingRequest("x"))
	wantKind(t, err, failure.Unavailable)
}

// TestBusCloseBoundsHandlers: closing the bus gives a responder's
// in-flight handler its 5s grace, then cancels it, whatever the handler
// would have waited for.
func TestBusCloseBoundsHandlers(t *testing.T) {
	b, err := bus.New(context.Background(), bus.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t, 40*time.Second)
	started := make(chan struct{})
	if _, err := b.ServeSampling(ctx, testkit.SamplerFunc(func(ctx context.Context, _ agent.SamplingRequest) (agent.SamplingResult, error) {
		close(started)
		<-ctx.Done() // a model call that only ends when cancelled
		return agent.SamplingResult{}, ctx.Err()
	}), bus.ServeOptions{}); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := b.Sampler().Sample(ctx, samplingRequest("x"))
		errc <- err
	}()
	<-started
	start := time.Now()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("Close took %s, want the 5s grace and little more", d)
	}
	<-errc
}
