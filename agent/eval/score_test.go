package eval_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/agent/eval"
	"github.com/switchboard-dev/switchboard/llm"
)

func calls(names ...string) []eval.Call {
	out := make([]eval.Call, len(names))
	for i, n := range names {
		out[i] = eval.Call{Tool: n, Args: json.RawMessage(`{"city":"Lisbon","n":2}`)}
	}
	return out
}

func expect(names ...string) []eval.ExpectedCall {
	out := make([]eval.ExpectedCall, len(names))
	for i, n := range names {
		out[i] = eval.ExpectedCall{Tool: n}
	}
	return out
}

func TestTrajectoryScorer(t *testing.T) {
	tests := []struct {
		name      string
		match     eval.Match
		want, got []string
		forbidden []string
		value     float64
		precision float64
		recall    float64
	}{
		{"exact equal", eval.MatchExact, []string{"a", "b"}, []string{"a", "b"}, nil, 1, 1, 1},
		{"exact reordered", eval.MatchExact, []string{"a", "b"}, []string{"b", "a"}, nil, 0.5, 0.5, 0.5},
		{"exact extra", "", []string{"a"}, []string{"a", "b"}, nil, 2.0 / 3, 0.5, 1},
		{"in order with extra", eval.MatchInOrder, []string{"a", "c"}, []string{"a", "b", "c"}, nil, 1, 2.0 / 3, 1},
		{"in order wrong order", eval.MatchInOrder, []string{"a", "c"}, []string{"c", "a"}, nil, 0.5, 0.5, 0.5},
		{"any order", eval.MatchAnyOrder, []string{"a", "b"}, []string{"b", "a"}, nil, 1, 1, 1},
		{"any order missing", eval.MatchAnyOrder, []string{"a", "b"}, []string{"b"}, nil, 2.0 / 3, 1, 0.5},
		{"subset", eval.MatchSubset, []string{"a"}, []string{"b", "a", "c"}, nil, 1, 1.0 / 3, 1},
		{"subset missing", eval.MatchSubset, []string{"a", "d"}, []string{"a"}, nil, 0.5, 1, 0.5},
		{"no calls expected, none made", eval.MatchExact, nil, nil, nil, 1, 1, 1},
		{"forbidden called", eval.MatchSubset, nil, []string{"send_email"}, []string{"send_email"}, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &eval.Case{Trajectory: &eval.Trajectory{Match: tt.match, Calls: expect(tt.want...), Forbidden: tt.forbidden}}
			s, err := eval.TrajectoryScorer{}.Score(context.Background(), &eval.Trial{Case: c, Calls: calls(tt.got...)})
			if err != nil {
				t.Fatal(err)
			}
			if !near(s.Value, tt.value) {
				t.Errorf("value %.3f, want %.3f (%s)", s.Value, tt.value, s.Detail)
			}
			if tt.forbidden == nil && (!near(s.Metrics["precision"], tt.precision) || !near(s.Metrics["recall"], tt.recall)) {
				t.Errorf("precision %.3f recall %.3f, want %.3f %.3f", s.Metrics["precision"], s.Metrics["recall"], tt.precision, tt.recall)
			}
			if s.Value < 1 && s.Detail == "" {
				t.Error("a failed match says nothing")
			}
		})
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func TestArgsScorer(t *testing.T) {
	tests := []struct {
		name   string
		want   eval.ExpectedCall
		value  float64
		detail string
	}{
		{"equal", eval.ExpectedCall{Tool: "a", Args: map[string]json.RawMessage{"city": json.RawMessage(`"Lisbon"`)}}, 1, ""},
		{"number", eval.ExpectedCall{Tool: "a", Args: map[string]json.RawMessage{"n": json.RawMessage(`2`)}}, 1, ""},
		{"different", eval.ExpectedCall{Tool: "a", Args: map[string]json.RawMessage{"city": json.RawMessage(`"Porto"`)}}, 0, `argument city = "Lisbon", want "Porto"`},
		{"missing", eval.ExpectedCall{Tool: "a", Args: map[string]json.RawMessage{"day": json.RawMessage(`"mon"`)}}, 0, "argument day missing"},
		{"regex", eval.ExpectedCall{Tool: "a", ArgsRegex: map[string]string{"city": "^Lis"}}, 1, ""},
		{"regex fails", eval.ExpectedCall{Tool: "a", ArgsRegex: map[string]string{"city": "^Por"}}, 0, "does not match /^Por/"},
		{"not called", eval.ExpectedCall{Tool: "b", ArgsRegex: map[string]string{"city": "."}}, 0, "b: not called"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &eval.Case{Trajectory: &eval.Trajectory{Calls: []eval.ExpectedCall{tt.want}}}
			s, err := eval.ArgsScorer{}.Score(context.Background(), &eval.Trial{Case: c, Calls: calls("a")})
			if err != nil || s == nil {
				t.Fatalf("score %v, %v", s, err)
			}
			if s.Value != tt.value || !strings.Contains(s.Detail, tt.detail) {
				t.Errorf("got %.2f %q, want %.2f %q", s.Value, s.Detail, tt.value, tt.detail)
			}
		})
	}
}

func TestAnswerAndSchemaScorers(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"total":{"type":"number"}},"required":["total"]}`)
	tests := []struct {
		name   string
		answer eval.Answer
		text   string
		scorer eval.Scorer
		value  float64
	}{
		{"exact", eval.Answer{Exact: "Hello!"}, " Hello!\n", eval.AnswerScorer{}, 1},
		{"exact differs", eval.Answer{Exact: "Hello!"}, "Hi", eval.AnswerScorer{}, 0},
		{"contains half", eval.Answer{Contains: []string{"a", "z"}}, "abc", eval.AnswerScorer{}, 0.5},
		{"not contains", eval.Answer{NotContains: []string{"SECRET"}}, "the SECRET is out", eval.AnswerScorer{}, 0},
		{"regex", eval.Answer{Regex: `^\d+ items$`}, "12 items", eval.AnswerScorer{}, 1},
		{"schema valid in fence", eval.Answer{Schema: schema}, "```json\n{\"total\": 3}\n```", eval.SchemaScorer{}, 1},
		{"schema invalid", eval.Answer{Schema: schema}, `{"total": "3"}`, eval.SchemaScorer{}, 0},
		{"schema not JSON", eval.Answer{Schema: schema}, `three`, eval.SchemaScorer{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &eval.Case{Answer: &tt.answer}
			s, err := tt.scorer.Score(context.Background(), &eval.Trial{Case: c, Text: tt.text})
			if err != nil || s == nil {
				t.Fatalf("score %v, %v", s, err)
			}
			if !near(s.Value, tt.value) {
				t.Errorf("value %.2f, want %.2f (%s)", s.Value, tt.value, s.Detail)
			}
		})
	}
}

func TestJudge(t *testing.T) {
	judge := &eval.Judge{Model: llm.NewCyclic(llm.Say("SCORE: 8\nMostly right.")), MaxCalls: 2}
	c := &eval.Case{Input: eval.Input{Text: "q"}, Answer: &eval.Answer{Rubric: "says hello"}}
	for i := range 2 {
		s, err := judge.Score(context.Background(), &eval.Trial{Case: c, Text: "hello"})
		if err != nil || !near(s.Value, 0.8) || s.Detail != "Mostly right." {
			t.Fatalf("call %d: %+v %v", i, s, err)
		}
	}
	if _, err := judge.Score(context.Background(), &eval.Trial{Case: c, Text: "hello"}); err == nil {
		t.Error("the judge's third call passed its bound of 2")
	}
	if judge.Calls() != 3 {
		t.Errorf("calls %d", judge.Calls())
	}
	bad := &eval.Judge{Model: llm.NewCyclic(llm.Say("great answer"))}
	if s, _ := bad.Score(context.Background(), &eval.Trial{Case: c}); s.Value != 0 || !strings.Contains(s.Detail, "no SCORE") {
		t.Errorf("a reply without a score: %+v", s)
	}
}

func TestPassAtK(t *testing.T) {
	// A model that answers right every third time: pass@3 passes, pass@1
	// of its first answer fails.
	n := 0
	model := llm.NewCyclic(llm.React(func(*llm.Request) llm.Step {
		n++
		if n%3 == 0 {
			return llm.Say("Hello!")
		}
		return llm.Say("Hi")
	}))
	set := &eval.Set{Name: "flaky", Cases: []eval.Case{{Name: "hello", Input: eval.Input{Text: "greet"},
		Answer: &eval.Answer{Exact: "Hello!"}}}}
	for _, tt := range []struct {
		k      int
		pass   bool
		passes int
	}{{1, false, 0}, {3, true, 1}} {
		n = 0
		rep, err := eval.Run(context.Background(), set, eval.Config{Model: model, Repeat: tt.k, Parallel: 1,
			Agent: agentOf("p", weatherDesc)})
		if err != nil {
			t.Fatal(err)
		}
		c := rep.Cases[0]
		if c.Pass != tt.pass || c.Passes != tt.passes || c.Trials != tt.k {
			t.Errorf("k=%d: %+v", tt.k, c)
		}
	}
}

func TestLoadADK(t *testing.T) {
	s, err := eval.Load("testdata/adk/live_non_blocking_tool_agent.evalset.json")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "live_non_blocking_tool_agent" || len(s.Cases) != 1 || len(s.Skipped) != 1 {
		t.Fatalf("%+v", s)
	}
	c := s.Cases[0]
	if c.Name != "background_task_scripted" || c.Input.Text != "While that runs, what is two plus two?" ||
		len(c.Before) != 1 || !strings.HasPrefix(c.Before[0], "Please start") {
		t.Errorf("case %+v", c)
	}

	// An ADK set with tool uses and a final response runs unchanged.
	w, err := eval.Load("testdata/adk/weather.evalset.json")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := eval.Run(context.Background(), w, eval.Config{Model: weatherModel(), Judge: llm.NewCyclic(llm.Say("SCORE: 10\nsame")),
		Agent: agentOf(weatherPrompt, weatherDesc)})
	if err != nil || rep.Passed != 1 {
		t.Fatalf("%v %+v", err, rep)
	}
	if rep.JudgeCalls != 1 {
		t.Errorf("judge calls %d", rep.JudgeCalls)
	}
}

func TestParseRefuses(t *testing.T) {
	for _, tt := range []struct{ name, src, want string }{
		{"empty", "", "empty"},
		{"no name", `{"name":"s","cases":[{"input":"x"}]}`, "case 0 has no name"},
		{"twice", `{"name":"s","cases":[{"name":"a","input":"x"},{"name":"a","input":"y"}]}`, `"a" appears twice`},
		{"no input", "name: s\ncases:\n  - name: a\n", `"a" has no input`},
		{"bad match", `{"name":"s","cases":[{"name":"a","input":"x","trajectory":{"match":"most","calls":[]}}]}`, "unknown trajectory match"},
		{"bad regex", `{"name":"s","cases":[{"name":"a","input":"x","answer":{"regex":"("}}]}`, "answer regex"},
		{"unknown field", `{"name":"s","cases":[{"name":"a","input":"x","expected":1}]}`, "unknown field"},
		{"ADK without conversation", `{"eval_set_id":"x","eval_cases":[{"eval_id":"c"}]}`, "no conversation"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := eval.Parse([]byte(tt.src))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"name":"s","cases":[{"name":"a","input":"x"}]}`, "name: s\ncases: []\n",
		`{"eval_set_id":"x","eval_cases":[{"eval_id":"c","conversation":[{"user_content":{"parts":[{"text":"hi"}]}}]}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = eval.Parse(b)
	})
}

func FuzzParseCassette(f *testing.F) {
	f.Add([]byte(`{"version":1,"model":"m","turns":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := eval.ParseCassette(b)
		if err != nil {
			return
		}
		r := eval.NewReplayer(c)
		_, _ = r.Generate(context.Background(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "x"}}})
	})
}
