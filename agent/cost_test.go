package agent_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// metered is a provider-like model: the scripted model's turns, answered
// under a provider's name with the usage, model name and reasoning a
// provider reports, at an endpoint; it keeps every request it was sent.
type metered struct {
	inner     llm.Model
	name      string // Name ("" : the scripted model's)
	answered  string // Response.Model
	usage     llm.Usage
	reasoning string
	endpoint  string

	mu   sync.Mutex
	reqs []llm.Request
}

func (m *metered) Name() string {
	if m.name == "" {
		return m.inner.Name()
	}
	return m.name
}

func (m *metered) Capabilities() llm.Capabilities {
	return llm.Capabilities{Reasoning: true, PromptCache: true, Endpoint: m.endpoint}
}

func (m *metered) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	m.mu.Lock()
	m.reqs = append(m.reqs, *req)
	m.mu.Unlock()
	resp, err := m.inner.Generate(ctx, req)
	if err != nil {
		return nil, err
	}
	resp.Usage, resp.Model = m.usage, m.answered
	resp.Message.Reasoning = m.reasoning
	return resp, nil
}

func (m *metered) requests() []llm.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]llm.Request(nil), m.reqs...)
}

// TestCostOfTurns checks each model turn's cost and the run's, by class,
// against hand computation, with the price found by the configured
// model's name or by the model the provider says answered, and a model
// without a price.
func TestCostOfTurns(t *testing.T) {
	usage := llm.Usage{InputTokens: 10_000, CacheReadTokens: 6_000, CacheWriteTokens: 1_000, OutputTokens: 2_000, ReasoningTokens: 500}
	// claude-sonnet-4-5 by default: 3,000 × $3 + 6,000 × $0.30 + 1,000 × $3.75
	// + 2,000 × $15 = $0.009 + $0.0018 + $0.00375 + $0.03 = $0.04455 a turn.
	sonnetTurn := llm.Dollars(0.04455)
	// The user's price: $1 in, $2 out, cache and reasoning at their own.
	mine := llm.Price{Input: llm.Dollar, Output: 2 * llm.Dollar, CacheRead: 10 * llm.Cent, CacheWrite: 125 * llm.Cent, Reasoning: 4 * llm.Dollar}
	// 3,000 × $1 + 6,000 × $0.10 + 1,000 × $1.25 + 1,500 × $2 + 500 × $4
	// = $0.003 + $0.0006 + $0.00125 + $0.003 + $0.002 = $0.00985.
	mineTurn := llm.Dollars(0.00985)
	for _, tc := range []struct {
		name, model, answered string
		prices                llm.Prices
		want                  llm.Cost // per turn
		str                   string   // the run's (two turns)
	}{
		{name: "by model name", model: "anthropic/claude-sonnet-4-5", want: llm.Cost{USD: sonnetTurn}, str: "$0.0891"},
		{name: "by the answering model", model: "anthropic/claude-sonnet-4-5", answered: "claude-sonnet-4-5-20250929",
			want: llm.Cost{USD: sonnetTurn}, str: "$0.0891"},
		{name: "answering model unpriced: the configured one's", model: "anthropic/claude-sonnet-4-5", answered: "claude-new-thing",
			want: llm.Cost{USD: sonnetTurn}, str: "$0.0891"},
		{name: "user price replaces the default", model: "anthropic/claude-sonnet-4-5",
			prices: llm.DefaultPrices().With(llm.Prices{"anthropic/claude-sonnet-4-5": mine}), want: llm.Cost{USD: mineTurn}, str: "$0.0197"},
		{name: "user table without defaults", model: "openai/gpt-4o", prices: llm.Prices{"acme/x": mine},
			want: llm.Cost{Unpriced: 1}, str: "cost unknown"},
		{name: "unpriced", model: "acme/unknown-model", want: llm.Cost{Unpriced: 1}, str: "cost unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &metered{inner: llm.NewScripted(llm.Calls(llm.CallTool("c1", "echo", nil)), llm.Say("done")),
				name: tc.model, answered: tc.answered, usage: usage}
			a := newAgent(t, agent.Config{Model: m, Tools: []agent.Tool{echoTool("echo", nil)}, Prices: tc.prices})
			evs, err := collect(t, a.Stream(testkit.Ctx(t, 10*time.Second), "go"))
			if err != nil {
				t.Fatal(err)
			}
			turns := eventsOf(evs, agent.EventModelTurn)
			if len(turns) != 2 {
				t.Fatalf("%d model turns, want 2", len(turns))
			}
			for _, ev := range turns {
				if ev.Cost == nil || *ev.Cost != tc.want {
					t.Errorf("turn %d cost %+v, want %+v", ev.Turn, ev.Cost, tc.want)
				}
			}
			ans := eventsOf(evs, agent.EventFinal)[0].Answer
			if want := tc.want.Add(tc.want); ans.Cost != want || ans.Cost.String() != tc.str {
				t.Errorf("answer cost %+v (%s), want %+v (%s)", ans.Cost, ans.Cost, want, tc.str)
			}
			if ans.Cost.Known() != tc.want.Known() {
				t.Errorf("Known = %v", ans.Cost.Known())
			}
		})
	}
}

func TestCostBudget(t *testing.T) {
	priced := func(p llm.Price) llm.Prices { return llm.Prices{llm.NewScripted().Name(): p} }
	loop := func() llm.Model { return llm.NewCyclic(llm.Calls(llm.CallTool("", "echo", nil))) }
	for _, tc := range []struct {
		name     string
		model    llm.Model
		prices   llm.Prices
		max      llm.USD
		newKind  failure.Kind // New fails with it (Unknown: New succeeds)
		runKind  failure.Kind // the run fails with it (Unknown: it succeeds)
		text     string
		maxTurns int // the run's turns at most
	}{
		// Each scripted turn's estimated usage (a few hundred tokens, the
		// system prompt included) at $1 per million passes $0.0001 within a
		// few turns.
		{name: "trips", model: loop(), prices: priced(llm.Price{Input: llm.Dollar, Output: llm.Dollar}), max: 100 * llm.Microdollar,
			runKind: failure.Budget, text: "cost budget of $0.0001 is exhausted", maxTurns: 10},
		{name: "within", model: llm.NewScripted(llm.Calls(llm.CallTool("", "echo", nil)), llm.Say("done")),
			prices: priced(llm.Price{Input: llm.Dollar, Output: llm.Dollar}), max: llm.Dollar, maxTurns: 2},
		{name: "unpriced model", model: loop(), prices: llm.Prices{}, max: llm.Dollar, newKind: failure.Config,
			text: "has no price in agent.Config.Prices"},
		{name: "bad price", model: loop(), prices: priced(llm.Price{Input: -1}), newKind: failure.Config, text: "negative"},
		{name: "no usage reported", model: &metered{inner: loop()}, prices: priced(llm.Price{Input: llm.Dollar}), max: llm.Dollar,
			runKind: failure.Budget, text: "cannot be enforced", maxTurns: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := agent.New(context.Background(), agent.Config{Model: tc.model, Tools: []agent.Tool{echoTool("echo", nil)},
				Permissions: agent.AllowAll(), Policy: fastPolicy(time.Minute), Prices: tc.prices, Budget: agent.Budget{MaxCost: tc.max}})
			if tc.newKind != failure.Unknown {
				var fe *failure.Error
				if !errors.As(err, &fe) || fe.Kind != tc.newKind || !strings.Contains(err.Error(), tc.text) {
					t.Fatalf("New: %v, want a %s failure saying %q", err, tc.newKind, tc.text)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			evs, err := collect(t, a.Stream(testkit.Ctx(t, 10*time.Second), "go"))
			if tc.runKind == failure.Unknown {
				if err != nil {
					t.Fatal(err)
				}
			} else {
				if got := kindOf(t, err); got != tc.runKind || !strings.Contains(err.Error(), tc.text) {
					t.Fatalf("run error %v (%s), want %s saying %q", err, got, tc.runKind, tc.text)
				}
				fails := eventsOf(evs, agent.EventFailure)
				if len(fails) == 0 || fails[len(fails)-1].Failure.Kind != tc.runKind {
					t.Errorf("failure events %+v, want the budget's", fails)
				}
			}
			if n := len(eventsOf(evs, agent.EventModelTurn)); n > tc.maxTurns || n == 0 {
				t.Errorf("%d model turns, want 1 to %d", n, tc.maxTurns)
			}
		})
	}
}

// TestReasoningKept: the model's reasoning is its own event, stays in the
// history (providers need it back) and is never the answer's text; the
// agent's reasoning setting reaches every request.
func TestReasoningKept(t *testing.T) {
	m := &metered{inner: llm.NewScripted(llm.Calls(llm.CallTool("c1", "echo", nil)), llm.Say("the answer")),
		usage: llm.Usage{InputTokens: 10, OutputTokens: 30, ReasoningTokens: 20}, reasoning: "first I think"}
	effort := &llm.Reasoning{Effort: llm.EffortHigh, BudgetTokens: 2048}
	temp := 0.25
	a := newAgent(t, agent.Config{Model: m, Tools: []agent.Tool{echoTool("echo", nil)}, Reasoning: effort, Temperature: &temp})
	s := a.NewSession()
	evs, err := collect(t, s.Stream(testkit.Ctx(t, 10*time.Second), "go"))
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, ev := range evs {
		switch ev.Type {
		case agent.EventModelReasoning, agent.EventModelTurn:
			order = append(order, string(ev.Type)+":"+ev.Text)
		}
	}
	if got, want := strings.Join(order, ","), "model_reasoning:first I think,model_turn:,model_reasoning:first I think,model_turn:the answer"; got != want {
		t.Errorf("events %s, want %s", got, want)
	}
	ans := eventsOf(evs, agent.EventFinal)[0].Answer
	if ans.Text != "the answer" || strings.Contains(ans.Text, "think") {
		t.Errorf("answer text %q", ans.Text)
	}
	var kept int
	for _, msg := range s.History() {
		if msg.Role == llm.RoleAssistant && msg.Reasoning == "first I think" {
			kept++
		}
	}
	if kept != 2 {
		t.Errorf("%d assistant messages of the history keep their reasoning, want 2", kept)
	}
	reqs := m.requests()
	for i, req := range reqs {
		if req.Reasoning != effort || req.Temperature == nil || *req.Temperature != 0.25 {
			t.Errorf("request %d: reasoning %+v temperature %v", i, req.Reasoning, req.Temperature)
		}
	}
	// The second request sends the first turn's reasoning back.
	if last := reqs[1].Messages[1]; last.Role != llm.RoleAssistant || last.Reasoning != "first I think" {
		t.Errorf("the second request's assistant message %+v lost its reasoning", last)
	}
}
