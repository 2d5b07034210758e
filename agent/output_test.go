package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/testkit"
	"github.com/switchboard-dev/switchboard/llm"
)

// weatherSchema is the answer shape of the typed-answer tests.
const weatherSchema = `{"type":"object","properties":{"city":{"type":"string"},"temp_c":{"type":"number"}},` +
	`"required":["city","temp_c"],"additionalProperties":false}`

func weatherOutput() *llm.Output {
	return &llm.Output{Name: "weather", Description: "the weather in a city", Schema: json.RawMessage(weatherSchema)}
}

// lastUser is the text of the request's last user message.
func lastUser(req *llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if m := req.Messages[i]; m.Role == llm.RoleUser {
			return m.Text
		}
	}
	return ""
}

// repairWith answers good once the request's last user message (the repair
// prompt) contains want, and a text the test fails on otherwise.
func repairWith(t *testing.T, want, good string) llm.Step {
	return llm.React(func(req *llm.Request) llm.Step {
		if got := lastUser(req); !strings.Contains(got, want) {
			t.Errorf("repair prompt %q: want it to contain %q", got, want)
		}
		return llm.Say(good)
	})
}

func TestTypedAnswer(t *testing.T) {
	const good = `{"city": "Paris", "temp_c": 21}`
	cases := []struct {
		name     string
		steps    func(t *testing.T) []llm.Step
		repairs  int
		budget   agent.Budget
		wantData string
		wantKind failure.Kind // of the run's error (0: success)
		// wantRepairs is AnswerError.Repairs, when the run ends with one.
		wantRepairs int
		turns       int
		failures    []failure.Kind // the kinds OnFailure saw, in order
	}{
		{name: "valid answer", steps: func(*testing.T) []llm.Step { return []llm.Step{llm.Say(good)} },
			wantData: good, turns: 1},
		{name: "fenced answer", steps: func(*testing.T) []llm.Step { return []llm.Step{llm.Say("```json\n" + good + "\n```")} },
			wantData: good, turns: 1},
		{name: "repair succeeds", steps: func(t *testing.T) []llm.Step {
			return []llm.Step{llm.Say(`{"city":"Paris"}`), repairWith(t, "missing property 'temp_c'", good)}
		}, wantData: good, turns: 2, failures: []failure.Kind{failure.InvalidArgs}},
		{name: "not JSON, then repaired", steps: func(t *testing.T) []llm.Step {
			return []llm.Step{llm.Say("It is sunny in Paris."), repairWith(t, "not valid JSON", good)}
		}, wantData: good, turns: 2, failures: []failure.Kind{failure.InvalidArgs}},
		{name: "wrong type twice, then repaired", steps: func(t *testing.T) []llm.Step {
			return []llm.Step{llm.Say(`{"city":"Paris","temp_c":"warm"}`), repairWith(t, "at /temp_c", `{"city":1,"temp_c":2}`),
				repairWith(t, "at /city", good)}
		}, wantData: good, turns: 3, failures: []failure.Kind{failure.InvalidArgs, failure.InvalidArgs}},
		{name: "repairs exhausted", steps: func(*testing.T) []llm.Step {
			return []llm.Step{llm.Say("sunny"), llm.Say("still sunny"), llm.Say(`{"city":"Paris"}`)}
		}, wantKind: failure.Model, wantRepairs: 2, turns: 3,
			failures: []failure.Kind{failure.InvalidArgs, failure.InvalidArgs, failure.Model}},
		{name: "no repairs", repairs: -1, steps: func(*testing.T) []llm.Step { return []llm.Step{llm.Say("sunny")} },
			wantKind: failure.Model, wantRepairs: 0, turns: 1, failures: []failure.Kind{failure.Model}},
		{name: "repairs count as turns of the budget", budget: agent.Budget{MaxTurns: 2}, steps: func(*testing.T) []llm.Step {
			return []llm.Step{llm.Say("sunny"), llm.Say("still sunny"), llm.Say(good)}
		}, wantKind: failure.Budget, turns: 2,
			failures: []failure.Kind{failure.InvalidArgs, failure.InvalidArgs, failure.Budget}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var seen []failure.Kind
			pol := failure.NewPolicy(failure.PolicyConfig{OnFailure: func(_ context.Context, o failure.Outcome) {
				mu.Lock()
				seen = append(seen, o.Err.Kind)
				mu.Unlock()
			}})
			a := newAgent(t, agent.Config{Model: llm.NewScripted(tc.steps(t)...), Output: weatherOutput(),
				OutputRepairs: tc.repairs, Budget: tc.budget, Policy: pol})
			s := a.NewSession()
			ans, err := s.Run(context.Background(), "weather in Paris?")
			if tc.wantKind != 0 {
				if !errors.Is(err, tc.wantKind) {
					t.Fatalf("err = %v, want kind %s", err, tc.wantKind)
				}
				var ae *agent.AnswerError
				if tc.wantKind == failure.Model {
					if !errors.As(err, &ae) || ae.Output != "weather" || ae.Problem == "" || ae.Repairs != tc.wantRepairs {
						t.Fatalf("err = %v (%+v): want an AnswerError of weather after %d repairs", err, ae, tc.wantRepairs)
					}
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if string(ans.Data) != tc.wantData {
					t.Fatalf("Data = %s, want %s", ans.Data, tc.wantData)
				}
			}
			if ans == nil || ans.Turns != tc.turns {
				t.Fatalf("answer %+v: want %d turns", ans, tc.turns)
			}
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(seen, tc.failures) {
				t.Fatalf("failures handled = %v, want %v", seen, tc.failures)
			}
			checkOneResultPerCall(t, s.History())
		})
	}
}

// abortInvalid is a policy that ends the run on every failure, as a user's
// policy may decide for invalid answers.
type abortInvalid struct{ failure.Policy }

func (p abortInvalid) Handle(ctx context.Context, err error) failure.Outcome {
	o := p.Policy.Handle(ctx, err)
	o.Abort = true
	return o
}

func TestTypedAnswerRepairIsThePolicysDecision(t *testing.T) {
	m := llm.NewScripted(llm.Say("sunny"), llm.Say(`{"city":"Paris","temp_c":21}`))
	a := newAgent(t, agent.Config{Model: m, Output: weatherOutput(), Policy: abortInvalid{fastPolicy(0)}})
	_, err := a.Run(context.Background(), "weather?")
	if !errors.Is(err, failure.InvalidArgs) || m.Requests() != 1 {
		t.Fatalf("err = %v after %d requests: want the policy's abort of the invalid answer, no repair", err, m.Requests())
	}
}

// nativeModel is a scripted model that says it enforces Request.Output.
type nativeModel struct{ *llm.Scripted }

func (nativeModel) Capabilities() llm.Capabilities { return llm.Capabilities{StructuredOutput: true} }

func TestTypedAnswerAsksTheModel(t *testing.T) {
	for _, native := range []bool{false, true} {
		var req llm.Request
		sc := llm.NewScripted(llm.React(func(r *llm.Request) llm.Step {
			req = *r
			return llm.Say(`{"city":"Paris","temp_c":21}`)
		}))
		var m llm.Model = sc
		if native {
			m = nativeModel{sc}
		}
		a := newAgent(t, agent.Config{Model: m, Output: weatherOutput()})
		if _, err := a.Run(context.Background(), "weather?"); err != nil {
			t.Fatal(err)
		}
		if req.Output == nil || req.Output.Name != "weather" || string(req.Output.Schema) != weatherSchema {
			t.Fatalf("native %v: Request.Output = %+v", native, req.Output)
		}
		note := strings.Contains(req.System, "<answer_schema>\n"+weatherSchema)
		if note == native {
			t.Fatalf("native %v: the system prompt has the schema: %v, want %v", native, note, !native)
		}
	}
}

func TestTypedAnswerStreams(t *testing.T) {
	const answer = `{"city":"Paris","temp_c":21}`
	a := newAgent(t, agent.Config{Model: llm.NewScripted(llm.Say(answer)), Output: weatherOutput()})
	evs, err := collect(t, a.Stream(context.Background(), "weather?"))
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	var final *agent.Answer
	for _, ev := range evs {
		switch ev.Type {
		case agent.EventModelText:
			text.WriteString(ev.Text)
		case agent.EventFinal:
			final = ev.Answer
		}
	}
	if text.String() != answer {
		t.Fatalf("model_text events = %q, want the answer streamed", text.String())
	}
	if final == nil || string(final.Data) != answer || final.Text != answer {
		t.Fatalf("final answer %+v: want Data and Text", final)
	}
}

func TestTypedAnswerInput(t *testing.T) {
	// The outer run is asked for a weather answer through its Input; its
	// tool and the sub-agent it calls (untyped: a text answer) do not see
	// that Input.
	sawInput := make(chan bool, 1)
	probe := tool("probe", func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
		in, ok := agent.InputFrom(ctx)
		sawInput <- ok && in.Output != nil
		return agent.TextResult("probed"), nil
	})
	sub := newAgent(t, agent.Config{Name: "helper", Model: llm.NewScripted(llm.Say("plain text from the helper"))})
	st, err := agent.AsTool(sub, nil)
	if err != nil {
		t.Fatal(err)
	}
	var subResult string
	outer := newAgent(t, agent.Config{Name: "outer", Tools: []agent.Tool{probe, st},
		Model: llm.NewScripted(
			llm.Calls(llm.CallTool("c1", "probe", map[string]any{}), llm.CallTool("c2", "helper", map[string]any{"input": "help"})),
			llm.React(func(req *llm.Request) llm.Step {
				for _, r := range req.Messages[len(req.Messages)-1].ToolResults {
					if r.Name == "helper" {
						subResult = r.Content
					}
				}
				return llm.Say(`{"city":"Oslo","temp_c":-3}`)
			}))})
	ctx := agent.WithInput(context.Background(), agent.Input{Output: weatherOutput()})
	ans, err := outer.Run(ctx, "weather?")
	if err != nil {
		t.Fatal(err)
	}
	if string(ans.Data) != `{"city":"Oslo","temp_c":-3}` {
		t.Fatalf("Data = %s", ans.Data)
	}
	if <-sawInput {
		t.Fatal("the run's tool saw the run's Input")
	}
	if !strings.Contains(subResult, "plain text from the helper") {
		t.Fatalf("the nested run's result %q: want its text answer (it must not be asked for the outer shape)", subResult)
	}

	// The Input replaces the agent's own Output for one run.
	typed := newAgent(t, agent.Config{Model: llm.NewScripted(llm.Say(`[1,2]`)), Output: weatherOutput()})
	ans, err = typed.Run(agent.WithInput(context.Background(), agent.Input{Output: &llm.Output{Schema: json.RawMessage(`{"type":"array"}`)}}), "list")
	if err != nil || string(ans.Data) != `[1,2]` {
		t.Fatalf("override: %v, %+v", err, ans)
	}
}

func TestTypedAnswerConfigErrors(t *testing.T) {
	bad := []*llm.Output{
		{Schema: json.RawMessage(`{"type":`)},
		{Schema: json.RawMessage(`{"type":"no such type"}`)},
		{},
		{Name: "has space", Schema: json.RawMessage(`{}`)},
	}
	for i, o := range bad {
		_, err := agent.New(context.Background(), agent.Config{Model: llm.NewScripted(), Output: o})
		if !errors.Is(err, failure.Config) {
			t.Errorf("Config.Output %d: err = %v, want a Config failure", i, err)
		}
		m := llm.NewScripted(llm.Say("{}"))
		a := newAgent(t, agent.Config{Model: m})
		_, err = a.Run(agent.WithInput(context.Background(), agent.Input{Output: o}), "x")
		if !errors.Is(err, failure.Config) || m.Requests() != 0 {
			t.Errorf("Input.Output %d: err = %v after %d requests, want a Config failure before any", i, err, m.Requests())
		}
	}
}

// Weather is the Go type of a typed answer.
type Weather struct {
	City  string  `json:"city" jsonschema:"the city asked about"`
	TempC float64 `json:"temp_c"`
	Note  string  `json:"note,omitempty"`
}

// textRunner answers with fixed text and ignores Input.
type textRunner struct{ text string }

func (textRunner) Name() string        { return "text" }
func (textRunner) Description() string { return "answers fixed text" }
func (r textRunner) Stream(ctx context.Context, input string) iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		yield(agent.Event{Type: agent.EventFinal, Text: r.text, Answer: &agent.Answer{Text: r.text}}, nil)
	}
}

func TestRunAs(t *testing.T) {
	out, err := agent.OutputFor[Weather]()
	if err != nil {
		t.Fatal(err)
	}
	var sch struct {
		Required             []string        `json:"required"`
		AdditionalProperties json.RawMessage `json:"additionalProperties"`
		Properties           map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(out.Schema, &sch); err != nil {
		t.Fatal(err)
	}
	if out.Name != "Weather" || !slices.Equal(sch.Required, []string{"city", "temp_c"}) || len(sch.AdditionalProperties) == 0 ||
		sch.Properties["city"].Description != "the city asked about" {
		t.Fatalf("OutputFor[Weather] = %s %s", out.Name, out.Schema)
	}

	cases := []struct {
		name     string
		runner   func(t *testing.T) agent.Runner
		want     Weather
		wantKind failure.Kind
	}{
		{name: "agent", runner: func(t *testing.T) agent.Runner {
			return newAgent(t, agent.Config{Model: llm.NewScripted(llm.Say(`{"city":"Rome","temp_c":30.5}`))})
		}, want: Weather{City: "Rome", TempC: 30.5}},
		{name: "agent repairs", runner: func(t *testing.T) agent.Runner {
			return newAgent(t, agent.Config{Model: llm.NewScripted(llm.Say(`{"city":"Rome"}`),
				repairWith(t, "temp_c", `{"city":"Rome","temp_c":30.5,"note":"hot"}`))})
		}, want: Weather{City: "Rome", TempC: 30.5, Note: "hot"}},
		{name: "agent gives up", runner: func(t *testing.T) agent.Runner {
			return newAgent(t, agent.Config{Model: llm.NewScripted(llm.Say("hot")), OutputRepairs: -1})
		}, wantKind: failure.Model},
		{name: "runner without Input, valid text", runner: func(*testing.T) agent.Runner {
			return textRunner{`{"city":"Rome","temp_c":1}`}
		}, want: Weather{City: "Rome", TempC: 1}},
		{name: "runner without Input, invalid text", runner: func(*testing.T) agent.Runner {
			return textRunner{`{"city":"Rome","extra":1}`}
		}, wantKind: failure.Model},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ans, err := agent.RunAs[Weather](context.Background(), tc.runner(t), "weather in Rome?")
			if tc.wantKind != 0 {
				var ae *agent.AnswerError
				if !errors.Is(err, tc.wantKind) || !errors.As(err, &ae) || ae.Output != "Weather" {
					t.Fatalf("err = %v, want a %s failure with an AnswerError", err, tc.wantKind)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want || len(ans.Data) == 0 {
				t.Fatalf("RunAs = %+v (data %s), want %+v", got, ans.Data, tc.want)
			}
		})
	}
}

func TestAsToolTyped(t *testing.T) {
	cases := []struct {
		name string
		sub  agent.Config
		opts *agent.AgentToolOptions
	}{
		{name: "typed agent", sub: agent.Config{Output: weatherOutput()}},
		{name: "options ask for the shape", opts: &agent.AgentToolOptions{Output: weatherOutput()}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.sub.Name = "forecaster"
			tc.sub.Model = llm.NewScripted(llm.Say("sunny"), repairWith(t, "not valid JSON", `{"city":"Oslo","temp_c":4}`))
			st, err := agent.AsTool(newAgent(t, tc.sub), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if string(st.Spec().OutputSchema) != weatherSchema {
				t.Fatalf("OutputSchema = %s", st.Spec().OutputSchema)
			}
			res, err := st.Call(context.Background(), json.RawMessage(`{"input":"Oslo"}`))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Parts) != 1 || res.Parts[0].Type != agent.PartJSON || string(res.Parts[0].JSON) != `{"city":"Oslo","temp_c":4}` {
				t.Fatalf("result = %+v: want one JSON part", res.Parts)
			}
		})
	}
	plain, err := agent.AsTool(newAgent(t, agent.Config{Name: "plain", Model: llm.NewScripted()}), nil)
	if err != nil || plain.Spec().OutputSchema != nil {
		t.Fatalf("untyped agent tool: %v, OutputSchema %s", err, plain.Spec().OutputSchema)
	}
	if _, err := agent.AsTool(textRunner{}, &agent.AgentToolOptions{Output: &llm.Output{}}); !errors.Is(err, failure.Config) {
		t.Fatalf("AsTool with an empty Output: %v, want a Config failure", err)
	}
}

// FuzzTypedAnswer feeds arbitrary text as a model's final answer to a
// typed run: the run never panics, and either succeeds with Data valid
// against the schema or fails with a Model failure naming the problem.
func FuzzTypedAnswer(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"city":"a","temp_c":1}`, "```json\n{\"city\":\"a\",\"temp_c\":1}\n```", "```",
		"``````", `{"city":"a","temp_c":1}{}`, `[`, "\x00", `{"city":"a","temp_c":1e999}`, " ```{\"city\":\"a\",\"temp_c\":1}``` "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		a := newAgent(t, agent.Config{Model: llm.NewScripted(llm.Say(text)), Output: weatherOutput(), OutputRepairs: -1})
		ans, err := a.Run(context.Background(), "weather?")
		if err != nil {
			var ae *agent.AnswerError
			if !errors.Is(err, failure.Model) || (strings.TrimSpace(text) != "" && !errors.As(err, &ae)) {
				t.Fatalf("err = %v: want a Model failure", err)
			}
			return
		}
		var w map[string]any
		dec := json.NewDecoder(strings.NewReader(string(ans.Data)))
		dec.UseNumber()
		if err := dec.Decode(&w); err != nil || len(w) != 2 || w["city"] == nil || w["temp_c"] == nil || dec.More() {
			t.Fatalf("Data %s of answer %q does not hold a weather: %v", ans.Data, text, err)
		}
	})
}

// TestTypedAnswerResumed: the answer shape a durable run's Input asked for
// is kept in its checkpoint: the process that resumes the run (without
// that Input) validates the answer against it and returns its Data.
func TestTypedAnswerResumed(t *testing.T) {
	ctx := testkit.Ctx(t, 20*time.Second)
	st := agent.NewMemoryStore(agent.MemoryStoreOptions{})
	var entered atomic.Int32
	release := make(chan struct{})
	inFirst := make(chan struct{})
	slow := agent.NewFuncTool(agent.ToolSpec{Name: "slow", Description: "waits the first time", ReadOnly: true},
		func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
			if entered.Add(1) == 1 {
				close(inFirst)
				select {
				case <-release:
				case <-ctx.Done():
				}
			}
			return agent.TextResult("done"), nil
		})
	mk := func() *agent.Agent {
		return newAgent(t, agent.Config{Name: "typed-durable", Tools: []agent.Tool{slow},
			Model:   &planModel{final: `{"city":"Oslo","temp_c":4}`, steps: [][]llm.ToolCall{{call("w1", "slow", 1)}}},
			Durable: agent.Durable(st, 0)})
	}
	s := mk().NewSession()
	old := make(chan error, 1)
	go func() {
		_, err := s.Run(agent.WithInput(ctx, agent.Input{Output: weatherOutput()}), "weather?")
		old <- err
	}()
	<-inFirst
	runs, _ := st.ListRuns(ctx)
	if len(runs) != 1 {
		t.Fatalf("runs: %v", runs)
	}
	ans, err := mk().Resume(ctx, runs[0])
	close(release)
	<-old
	if err != nil || string(ans.Data) != `{"city":"Oslo","temp_c":4}` {
		t.Fatalf("the resumed run: %v, %+v: want the typed answer", err, ans)
	}
}
