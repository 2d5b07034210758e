package eval_test

import (
	"context"
	"iter"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/agent/eval"
	"github.com/switchboard-dev/switchboard/llm"
)

// BenchmarkReplay runs the lisbon case against the stand-in scripted model
// and by replay of its cassette, alternately in the same loop, and reports
// replay/scripted: what replay costs over running the model's script.
func BenchmarkReplay(b *testing.B) {
	set := mustLoadB(b, "testdata/weather.yaml")
	one := &eval.Set{Name: "weather", Cases: set.Cases[:1]}
	ctx := context.Background()
	scripted := eval.NewRunner(eval.Config{Model: weatherModel(), Agent: agentOf(weatherPrompt, weatherDesc)})
	replay := eval.NewRunner(eval.Config{Cassettes: "testdata/cassettes/weather", Agent: agentOf(weatherPrompt, weatherDesc)})
	var ts, tr time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		if res := scripted.Case(ctx, one, &one.Cases[0]); !res.Pass {
			b.Fatalf("scripted: %+v", res)
		}
		t1 := time.Now()
		if res := replay.Case(ctx, one, &one.Cases[0]); !res.Pass {
			b.Fatalf("replay: %+v", res)
		}
		ts += t1.Sub(t0)
		tr += time.Since(t1)
	}
	b.ReportMetric(float64(ts.Nanoseconds())/float64(b.N), "scripted-ns/case")
	b.ReportMetric(float64(tr.Nanoseconds())/float64(b.N), "replay-ns/case")
	b.ReportMetric(float64(tr)/float64(ts), "replay/scripted")
}

func mustLoadB(b *testing.B, path string) *eval.Set {
	s, err := eval.Load(path)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

type sink struct {
	mu  sync.Mutex
	evs []agent.Event
}

func (s *sink) Emit(_ context.Context, ev agent.Event) {
	s.mu.Lock()
	s.evs = append(s.evs, ev)
	s.mu.Unlock()
}

func (s *sink) seq() iter.Seq2[agent.Event, error] {
	return func(yield func(agent.Event, error) bool) {
		for _, ev := range s.evs {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// A cassette built from a run's events replays that run; a changed tool
// result diverges.
func TestCassetteFromEvents(t *testing.T) {
	ctx := context.Background()
	var got sink
	a, err := agent.New(ctx, agent.Config{Name: "weather", Model: weatherModel(), Instructions: weatherPrompt,
		Tools: []agent.Tool{weatherTool(weatherDesc)}, Events: &got})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(ctx, "Weather in Porto and Lisbon, please."); err != nil {
		t.Fatal(err)
	}
	c, err := eval.CassetteFromEvents(got.seq())
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Turns) != 2 || !c.Turns[1].Request.Partial || len(c.Turns[1].Request.Messages[0].ToolResults) != 2 {
		t.Fatalf("cassette %+v", c)
	}
	dir := t.TempDir()
	if err := c.Save(dir + "/two.json"); err != nil {
		t.Fatal(err)
	}
	set := &eval.Set{Name: "s", Cases: []eval.Case{{Name: "two", Input: eval.Input{Text: "Weather in Porto and Lisbon, please."},
		Trajectory: &eval.Trajectory{Match: eval.MatchAnyOrder, Calls: []eval.ExpectedCall{{Tool: "get_weather"}, {Tool: "get_weather"}}}}}}
	rep, err := eval.Run(ctx, set, eval.Config{Cassettes: dir, Agent: agentOf(weatherPrompt, weatherDesc)})
	if err != nil || rep.Passed != 1 {
		t.Fatalf("%v %+v", err, rep.Cases)
	}
	// The same cassette against a tool that answers otherwise.
	broken := func(ctx context.Context, _ *eval.Case, m llm.Model) (agent.Runner, error) {
		return agent.New(ctx, agent.Config{Model: m, Tools: []agent.Tool{agent.TypedTool(agent.ToolSpec{Name: "get_weather",
			InputSchema: []byte(`{"type":"object"}`)}, func(context.Context, struct{}) (string, error) { return "rain", nil })}})
	}
	rep, _ = eval.Run(ctx, set, eval.Config{Cassettes: dir, Agent: broken})
	if rep.Passed != 0 || rep.Cases[0].Error == "" {
		t.Fatalf("a different tool result passed: %+v", rep.Cases)
	}
	t.Log(rep.Cases[0].Error)
}
