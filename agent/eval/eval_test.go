package eval_test

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/agent/eval"
	"github.com/switchboard-dev/switchboard/agent/eval/evaltest"
)

var update = flag.Bool("update", false, "record the cassettes of testdata again (against the stand-in model)")

// The weather set passes by replay of the cassettes kept in testdata.
func TestWeatherReplay(t *testing.T) {
	if *update {
		rep, err := eval.Run(context.Background(), mustLoad(t, "testdata/weather.yaml"), eval.Config{
			Mode: eval.Record, Model: weatherModel(), Cassettes: "testdata/cassettes/weather",
			Agent: agentOf(weatherPrompt, weatherDesc)})
		if err != nil || rep.Failed > 0 {
			t.Fatalf("recording: %v, %d failed", err, rep.Failed)
		}
	}
	rep := evaltest.RunFile(t, "testdata/weather.yaml", eval.Config{
		Cassettes: "testdata/cassettes/weather", Agent: agentOf(weatherPrompt, weatherDesc)})
	if rep.Passed != 4 {
		t.Errorf("passed %d of 4", rep.Passed)
	}
}

func mustLoad(t *testing.T, path string) *eval.Set {
	t.Helper()
	s, err := eval.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A broken prompt or tool description makes the recorded cases fail, each
// with the first difference of its requests.
func TestBrokenAgentDiverges(t *testing.T) {
	set := mustLoad(t, "testdata/weather.yaml")
	tests := []struct {
		name, prompt, desc, where, replayed string
	}{
		{"prompt", "You answer questions about the weather.", weatherDesc, "system", "You answer questions about the weather."},
		{"tool description", weatherPrompt, "Weather.", "tools[0].description", `"Weather."`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := eval.Run(context.Background(), set, eval.Config{Cassettes: "testdata/cassettes/weather",
				Agent: agentOf(tt.prompt, tt.desc)})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Passed != 0 {
				t.Errorf("%d cases passed with a broken %s", rep.Passed, tt.name)
			}
			c := rep.Cases[0]
			if !strings.Contains(c.Error, "replay diverged at turn 1, "+tt.where) || !strings.Contains(c.Error, tt.replayed) {
				t.Errorf("error does not show the difference:\n%s", c.Error)
			}
			t.Logf("%s", c.Error)
		})
	}
}

// Recording then replaying gives the same scores; the recorded cassette
// has secrets redacted; a different tool result diverges.
func TestRecordReplay(t *testing.T) {
	dir := t.TempDir()
	set := &eval.Set{Name: "s", Cases: []eval.Case{{Name: "secret",
		Input:      eval.Input{Text: "Weather in Lisbon? my api_key=sk-abcdefghijklmnopqrstu"},
		Trajectory: &eval.Trajectory{Calls: []eval.ExpectedCall{{Tool: "get_weather"}}}}}}
	rec, err := eval.Run(context.Background(), set, eval.Config{Mode: eval.Record, Model: weatherModel(),
		Cassettes: dir, Agent: agentOf(weatherPrompt, weatherDesc)})
	if err != nil || rec.Failed != 0 {
		t.Fatalf("record: %v %+v", err, rec)
	}
	b, err := os.ReadFile(filepath.Join(dir, "secret.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "sk-abcdefghijklmnopqrstu") {
		t.Error("the cassette holds the secret")
	}
	// Replay redacts the live request the same way, so it matches.
	rep, err := eval.Run(context.Background(), set, eval.Config{Cassettes: dir, Agent: agentOf(weatherPrompt, weatherDesc)})
	if err != nil || rep.Passed != 1 {
		t.Fatalf("replay: %v %+v", err, rep.Cases)
	}
	if cmp := eval.Compare(rec, rep); len(cmp.Worse)+len(cmp.Better) != 0 {
		t.Errorf("record and replay differ: %+v", cmp)
	}
}

func TestReplayerDivergence(t *testing.T) {
	c, err := eval.LoadCassette("testdata/cassettes/weather/lisbon.json")
	if err != nil {
		t.Fatal(err)
	}
	r := eval.NewReplayer(c)
	req := c.Turns[0].Request
	resp, err := r.Generate(context.Background(), req.LLM())
	if err != nil || resp == nil {
		t.Fatalf("first turn: %v", err)
	}
	next := c.Turns[1].Request.LLM()
	next.Messages[len(next.Messages)-1].ToolResults[0].Content = "rain in Lisbon"
	_, err = r.Generate(context.Background(), next)
	var d *eval.Divergence
	if !errors.As(err, &d) || d.Turn != 2 || !strings.Contains(d.Replayed, "rain in Lisbon") {
		t.Fatalf("want a divergence at turn 2, got %v", err)
	}
}
