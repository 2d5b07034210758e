package a2a

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"testing"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
)

// TestTypedAnswerDataPart: an agent with Config.Output served over A2A
// returns its typed answer as a data part (application/json) of the
// "answer" artifact, after the answer's text, over both bindings, sent and
// streamed (the text still streams in chunks); its card lists
// application/json among its output modes.
func TestTypedAnswerDataPart(t *testing.T) {
	const answer = `{"city": "Oslo", "temp_c": 4, "tags": ["cold", "clear"]}`
	ctx := context.Background()
	ag, err := agent.New(ctx, agent.Config{Name: "forecaster", Description: "forecasts",
		Model:       llm.NewCyclic(llm.Say(answer)),
		Permissions: agent.AllowAll(),
		Output: &llm.Output{Name: "forecast", Schema: json.RawMessage(
			`{"type":"object","properties":{"city":{"type":"string"},"temp_c":{"type":"number"},"tags":{"type":"array"}},"required":["city","temp_c"]}`)}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(ctx, ServerConfig{Agent: ag, ChunkBytes: 8})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		_ = srv.Close()
	})
	// check finds the data part of the answer's parts and its value.
	check := func(t *testing.T, parts []*a2ago.Part) {
		t.Helper()
		var text string
		var data []*a2ago.Part
		for _, p := range parts {
			switch c := p.Content.(type) {
			case a2ago.Text:
				text += string(c)
			case a2ago.Data:
				data = append(data, p)
			}
		}
		if text != answer {
			t.Errorf("answer text %q, want %q", text, answer)
		}
		if len(data) != 1 || data[0].MediaType != "application/json" || parts[len(parts)-1] != data[0] {
			t.Fatalf("parts %+v: want one application/json data part, last", parts)
		}
		got, _ := json.Marshal(data[0].Content.(a2ago.Data).Value)
		var want any
		_ = json.Unmarshal([]byte(answer), &want)
		w, _ := json.Marshal(want)
		if string(got) != string(w) {
			t.Errorf("data part %s, want %s", got, w)
		}
	}
	for _, b := range bindings {
		t.Run(string(b), func(t *testing.T) {
			c := clientFor(t, hs.URL, b, nil)
			tctx := ctxT(t)
			res, err := c.SendMessage(tctx, textMsg("Oslo?"))
			if err != nil {
				t.Fatal(err)
			}
			task, ok := res.(*a2ago.Task)
			if !ok || task.Status.State != a2ago.TaskStateCompleted || len(task.Artifacts) != 1 {
				t.Fatalf("result %#v", res)
			}
			check(t, task.Artifacts[0].Parts)

			var parts []*a2ago.Part
			chunks := 0
			for ev, err := range c.SendStreamingMessage(tctx, textMsg("Oslo?")) {
				if err != nil {
					t.Fatal(err)
				}
				if a, ok := ev.(*a2ago.TaskArtifactUpdateEvent); ok {
					chunks++
					if !a.Append {
						parts = nil
					}
					parts = append(parts, a.Artifact.Parts...)
				}
			}
			if chunks < 3 {
				t.Errorf("%d artifact chunks: the answer's text did not stream", chunks)
			}
			check(t, parts)
		})
	}
	card := srv.Card(ctx, hs.URL)
	if !slices.Contains(card.DefaultOutputModes, "application/json") {
		t.Errorf("card output modes %v", card.DefaultOutputModes)
	}
}
