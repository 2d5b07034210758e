package agent

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/llm"
)

// lenEmbedder embeds a text as its length and remembers the texts.
type lenEmbedder struct {
	name  string
	texts []string
}

func (e *lenEmbedder) Name() string { return e.name }

func (e *lenEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	e.texts = append(e.texts, texts...)
	out := make([][]float32, len(texts))
	for i, s := range texts {
		out[i] = []float32{float32(len(s)), 1}
	}
	return out, nil
}

// TestToolVectorsCache: a tool is embedded once per model and definition:
// a changed description or schema, or another model, embeds it again.
func TestToolVectorsCache(t *testing.T) {
	a := llm.ToolDef{Name: "a", Description: "first"}
	b := llm.ToolDef{Name: "b", Description: "second", Schema: json.RawMessage(`{"type":"object"}`)}
	bNewSchema := b
	bNewSchema.Schema = json.RawMessage(`{"type":"object","properties":{"x":{}}}`)
	aNewDesc := a
	aNewDesc.Description = "first, changed"
	var c toolVectors
	m1 := &lenEmbedder{name: "m1"}
	m2 := &lenEmbedder{name: "m2"}
	for _, step := range []struct {
		name    string
		e       *lenEmbedder
		defs    []llm.ToolDef
		wantNew int // texts the embedder is newly given
	}{
		{"first snapshot", m1, []llm.ToolDef{a, b}, 2},
		{"same snapshot", m1, []llm.ToolDef{a, b}, 0},
		{"reordered, one new schema", m1, []llm.ToolDef{bNewSchema, a}, 1},
		{"a new description", m1, []llm.ToolDef{aNewDesc}, 1},
		{"another model", m2, []llm.ToolDef{a, b}, 2},
	} {
		before := len(step.e.texts)
		vecs, err := c.vectors(t.Context(), step.e, nil, zerolog.Nop(), step.defs)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(step.e.texts) - before; got != step.wantNew {
			t.Errorf("%s: embedded %d texts, want %d", step.name, got, step.wantNew)
		}
		for i, d := range step.defs {
			if want := float32(len(toolText(d))); vecs[i][0] != want {
				t.Errorf("%s: vector %d = %v, want the vector of %s", step.name, i, vecs[i], d.Name)
			}
		}
	}
	if c.len() != 6 {
		t.Errorf("%d vectors cached, want 6", c.len())
	}
}
