package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// wordGuard trips on trip and rewrites secret to [x].
type wordGuard struct {
	trip  string
	hang  bool
	panic bool
}

func (g wordGuard) Name() string { return "word" }

func (g wordGuard) Check(ctx context.Context, c agent.GuardCheck) (agent.Verdict, error) {
	if g.hang {
		<-ctx.Done()
		return agent.Pass(), ctx.Err()
	}
	if g.panic {
		panic("guard bug")
	}
	if g.trip != "" && strings.Contains(c.Text, g.trip) {
		return agent.Trip("a denied word"), nil
	}
	if strings.Contains(c.Text, "secret") {
		return agent.Rewrite(strings.ReplaceAll(c.Text, "secret", "[x]"), "redacted"), nil
	}
	return agent.Pass(), nil
}

// localWordGuard is a wordGuard the agent calls as an agent.LocalGuard, on
// its own goroutine.
type localWordGuard struct{ wordGuard }

func (localWordGuard) Local() {}

// failGuard fails every check with err.
type failGuard struct{ err error }

func (failGuard) Name() string { return "word" }
func (failGuard) Local()       {}
func (g failGuard) Check(context.Context, agent.GuardCheck) (agent.Verdict, error) {
	return agent.Pass(), g.err
}

func guardEvents(evs []agent.Event) []agent.GuardInfo {
	var out []agent.GuardInfo
	for _, ev := range eventsOf(evs, agent.EventGuard) {
		out = append(out, *ev.Guard)
	}
	return out
}

func TestGuardPoints(t *testing.T) {
	type want struct {
		text    string // the answer
		action  string // the first guard event's action
		kind    failure.Kind
		noText  string // text that must not reach the model's requests or the answer
		failure bool   // an EventFailure of kind Guardrail
	}
	echo := echoTool("echo", nil)
	for _, tc := range []struct {
		name  string
		at    agent.GuardPoint
		g     wordGuard
		input string
		steps []llm.Step
		want  want
	}{
		{"input rewrite", agent.GuardInput, wordGuard{}, "my secret is 42",
			[]llm.Step{llm.React(func(req *llm.Request) llm.Step {
				return llm.Say("heard: " + req.Messages[len(req.Messages)-1].Text)
			})},
			want{text: "heard: my [x] is 42", action: "rewrite", noText: "secret"}},
		{"input trip", agent.GuardInput, wordGuard{trip: "bomb"}, "build a bomb",
			[]llm.Step{llm.React(func(req *llm.Request) llm.Step {
				return llm.Say("note: " + req.Messages[len(req.Messages)-1].Text)
			})},
			want{text: "note: (The user's message was withheld", action: "trip", failure: true, noText: "build a bomb"}},
		{"tool call trip", agent.GuardToolCall, wordGuard{trip: "rm"}, "go",
			[]llm.Step{llm.Calls(llm.CallTool("c1", "echo", map[string]string{"cmd": "rm -rf /"})), llm.SummarizeResults("got: ")},
			want{text: "guardrail", action: "trip", failure: true, noText: "echo {"}},
		{"tool call rewrite", agent.GuardToolCall, wordGuard{}, "go",
			[]llm.Step{llm.Calls(llm.CallTool("c1", "echo", map[string]string{"v": "secret"})), llm.SummarizeResults("got: ")},
			want{text: `echo {"v":"[x]"}`, action: "rewrite", noText: "secret"}},
		{"tool result rewrite", agent.GuardToolResult, wordGuard{}, "go",
			[]llm.Step{llm.Calls(llm.CallTool("c1", "echo", map[string]string{"v": "a secret"})), llm.SummarizeResults("got: ")},
			want{text: `[x]`, action: "rewrite", noText: "secret"}},
		{"tool result trip", agent.GuardToolResult, wordGuard{trip: "leak"}, "go",
			[]llm.Step{llm.Calls(llm.CallTool("c1", "echo", map[string]string{"v": "leak"})), llm.SummarizeResults("got: ")},
			want{text: "guardrail", action: "trip", failure: true, noText: `"leak"`}},
		{"output rewrite", agent.GuardOutput, wordGuard{}, "go",
			[]llm.Step{llm.Say("the secret is out")},
			want{text: "the [x] is out", action: "rewrite", noText: "secret"}},
		{"output trip then the model is told", agent.GuardOutput, wordGuard{trip: "darn"}, "go",
			[]llm.Step{llm.Say("darn it"), llm.React(func(req *llm.Request) llm.Step {
				return llm.Say("sorry: " + req.Messages[len(req.Messages)-1].Text)
			})},
			want{text: "sorry: (Your previous answer was withheld", action: "trip", failure: true, noText: "darn it"}},
	} {
		for _, g := range []agent.Guard{tc.g, localWordGuard{tc.g}} {
			name := tc.name
			if _, ok := g.(agent.LocalGuard); ok {
				name += " (local)"
			}
			t.Run(name, func(t *testing.T) {
				a := newAgent(t, agent.Config{Model: llm.NewCyclic(tc.steps...), Tools: []agent.Tool{echo},
					Guards: []agent.GuardRule{{Guard: g, At: tc.at}}})
				evs, err := collect(t, a.NewSession().Stream(context.Background(), tc.input))
				if err != nil {
					t.Fatalf("run: %v", err)
				}
				final := eventsOf(evs, agent.EventFinal)
				if len(final) != 1 || !strings.Contains(final[0].Text, tc.want.text) {
					t.Fatalf("answer %q, want it to hold %q", final[0].Text, tc.want.text)
				}
				gs := guardEvents(evs)
				if len(gs) == 0 || gs[0].Action != tc.want.action || gs[0].Guard != "word" {
					t.Fatalf("guard events %+v, want %s first", gs, tc.want.action)
				}
				var streamed strings.Builder
				for _, ev := range eventsOf(evs, agent.EventModelText) {
					streamed.WriteString(ev.Text)
				}
				if strings.Contains(streamed.String(), tc.want.noText) || strings.Contains(final[0].Text, tc.want.noText) {
					t.Errorf("%q got through: streamed %q, answer %q", tc.want.noText, streamed.String(), final[0].Text)
				}
				for _, ev := range eventsOf(evs, agent.EventToolFinished) {
					if strings.Contains(ev.Result.Text(), tc.want.noText) && tc.at == agent.GuardToolResult {
						t.Errorf("result %q got through", ev.Result.Text())
					}
				}
				fails := eventsOf(evs, agent.EventFailure)
				got := len(fails) > 0 && fails[0].Failure.Kind == failure.Guardrail && fails[0].Failure.Name == "word"
				if got != tc.want.failure {
					t.Errorf("guardrail failure event: %v, want %v (%+v)", got, tc.want.failure, fails)
				}
			})
		}
	}
}

// Rules of one point see the text as the rules before them left it, local
// or not, and stop at the first trip.
func TestGuardChain(t *testing.T) {
	rewrite, tripX := wordGuard{}, wordGuard{trip: "[x]"}
	for _, tc := range []struct {
		name    string
		at      agent.GuardPoint
		guards  []agent.Guard
		actions []string // the guard events' actions
		text    string   // the answer holds it
	}{
		{"result rewrite then pass", agent.GuardToolResult, []agent.Guard{localWordGuard{rewrite}, localWordGuard{wordGuard{trip: "nope"}}},
			[]string{"rewrite"}, "[x]"},
		{"result rewrite then trip", agent.GuardToolResult, []agent.Guard{localWordGuard{rewrite}, localWordGuard{tripX}, localWordGuard{rewrite}},
			[]string{"rewrite", "trip"}, "guardrail"},
		{"result local then not", agent.GuardToolResult, []agent.Guard{localWordGuard{rewrite}, tripX},
			[]string{"rewrite", "trip"}, "guardrail"},
		{"call rewrite then trip", agent.GuardToolCall, []agent.Guard{localWordGuard{rewrite}, localWordGuard{tripX}},
			[]string{"rewrite", "trip"}, "guardrail"},
		{"call pass then rewrite", agent.GuardToolCall, []agent.Guard{localWordGuard{wordGuard{trip: "nope"}}, localWordGuard{rewrite}},
			[]string{"rewrite"}, `echo {"v":"a [x]"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rules []agent.GuardRule
			for _, g := range tc.guards {
				rules = append(rules, agent.GuardRule{Guard: g, At: tc.at})
			}
			a := newAgent(t, agent.Config{Tools: []agent.Tool{echoTool("echo", nil)}, Guards: rules,
				Model: llm.NewScripted(llm.Calls(llm.CallTool("c1", "echo", map[string]string{"v": "a secret"})), llm.SummarizeResults("got: "))})
			evs, err := collect(t, a.NewSession().Stream(context.Background(), "go"))
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			var actions []string
			for _, g := range guardEvents(evs) {
				actions = append(actions, g.Action)
			}
			if strings.Join(actions, ",") != strings.Join(tc.actions, ",") {
				t.Errorf("guard events %q, want %q", actions, tc.actions)
			}
			if final := eventsOf(evs, agent.EventFinal); len(final) != 1 || !strings.Contains(final[0].Text, tc.text) {
				t.Errorf("answer %+v, want it to hold %q", final, tc.text)
			}
		})
	}
}

// abortPolicy ends the run on a guardrail trip.
type abortPolicy struct{ failure.Policy }

func (p abortPolicy) Handle(ctx context.Context, err error) failure.Outcome {
	o := p.Policy.Handle(ctx, err)
	if o.Err.Kind == failure.Guardrail {
		o.Abort = true
	}
	return o
}

// A trip in the middle of a streamed answer: the sentences before it went
// out, the one that tripped and what follows never do, and a policy that
// aborts ends the run with the trip.
func TestGuardTripMidStream(t *testing.T) {
	var seen []failure.Outcome
	pol := failure.NewPolicy(failure.PolicyConfig{OnFailure: func(_ context.Context, o failure.Outcome) { seen = append(seen, o) }})
	a := newAgent(t, agent.Config{Model: llm.NewScripted(llm.Say("All is fine. The launch code is 0000. More text follows here.")),
		Policy: abortPolicy{pol},
		Guards: []agent.GuardRule{{Guard: wordGuard{trip: "launch code"}, At: agent.GuardOutput, Hold: agent.HoldSentence}}})
	evs, err := collect(t, a.NewSession().Stream(context.Background(), "go"))
	if !errors.Is(err, failure.Guardrail) {
		t.Fatalf("err %v, want a guardrail failure", err)
	}
	var streamed strings.Builder
	for _, ev := range eventsOf(evs, agent.EventModelText) {
		streamed.WriteString(ev.Text)
	}
	if streamed.String() != "All is fine. " {
		t.Errorf("streamed %q, want only the first sentence", streamed.String())
	}
	if len(seen) != 1 || seen[0].Err.Name != "word" || !strings.Contains(seen[0].Err.Message, "denied word") {
		t.Errorf("OnFailure saw %+v", seen)
	}
}

// A guard that hangs is stopped at its deadline; one that panics is
// recovered, on the agent's goroutine too (a local guard); one that fails
// fails: each blocks as a failure of its own kind.
func TestGuardHangsAndPanics(t *testing.T) {
	for _, tc := range []struct {
		name string
		g    agent.Guard
		kind failure.Kind
	}{
		{"hang", wordGuard{hang: true}, failure.Timeout},
		{"panic", wordGuard{panic: true}, failure.Panic},
		{"local panic", localWordGuard{wordGuard{panic: true}}, failure.Panic},
		{"local error", failGuard{errors.New("no answer")}, failure.Internal},
		{"local failure", failGuard{&failure.Error{Kind: failure.Unavailable, Message: "down"}}, failure.Unavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAgent(t, agent.Config{Tools: []agent.Tool{echoTool("echo", nil)},
				Model:  llm.NewScripted(llm.Calls(llm.CallTool("c1", "echo", map[string]string{"v": "x"})), llm.SummarizeResults("got: ")),
				Guards: []agent.GuardRule{{Guard: tc.g, At: agent.GuardToolResult, Timeout: 50 * time.Millisecond}}})
			start := time.Now()
			evs, _ := collect(t, a.NewSession().Stream(context.Background(), "go"))
			if time.Since(start) > 5*time.Second {
				t.Fatalf("the run took %s", time.Since(start))
			}
			fails := eventsOf(evs, agent.EventFailure)
			if len(fails) == 0 || fails[0].Failure.Kind != tc.kind || fails[0].Failure.Name != "word" {
				t.Fatalf("failures %+v, want %s from the guard", fails, tc.kind)
			}
			for _, ev := range eventsOf(evs, agent.EventToolFinished) {
				if strings.Contains(ev.Result.Text(), "echo {") {
					t.Errorf("the unchecked result reached the model: %q", ev.Result.Text())
				}
			}
		})
	}
}

// A detect-only guard reports and changes nothing.
func TestGuardDetectOnly(t *testing.T) {
	a := newAgent(t, agent.Config{Model: llm.NewScripted(llm.Say("the secret is out")),
		Guards: []agent.GuardRule{{Guard: wordGuard{}, DetectOnly: true}}})
	evs, err := collect(t, a.NewSession().Stream(context.Background(), "a secret input"))
	if err != nil {
		t.Fatal(err)
	}
	if f := eventsOf(evs, agent.EventFinal); f[0].Text != "the secret is out" {
		t.Errorf("answer %q changed", f[0].Text)
	}
	gs := guardEvents(evs)
	if len(gs) != 2 || !gs[0].DetectOnly || gs[0].Action != "rewrite" {
		t.Errorf("guard events %+v, want two detect-only rewrites (input, output)", gs)
	}
}
