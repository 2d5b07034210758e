package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rs/zerolog"
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

// TestToolVectorsCache: a tool is embedded once per model and embedded
// text: a changed description or title, or another model, embeds it
// again; a changed schema, which is not embedded, does not.
func TestToolVectorsCache(t *testing.T) {
	a := ToolSpec{Name: "a", Description: "first"}
	b := ToolSpec{Name: "b", Description: "second", InputSchema: json.RawMessage(`{"type":"object"}`)}
	bNewSchema := b
	bNewSchema.InputSchema = json.RawMessage(`{"type":"object","properties":{"x":{}}}`)
	aNewDesc := a
	aNewDesc.Description = "first, changed"
	aTitled := a
	aTitled.Title = "A"
	var c toolVectors
	m1 := &lenEmbedder{name: "m1"}
	m2 := &lenEmbedder{name: "m2"}
	for _, step := range []struct {
		name    string
		e       *lenEmbedder
		tools   []ToolSpec
		wantNew int // texts the embedder is newly given
	}{
		{"first snapshot", m1, []ToolSpec{a, b}, 2},
		{"same snapshot", m1, []ToolSpec{a, b}, 0},
		{"reordered, a new schema", m1, []ToolSpec{bNewSchema, a}, 0},
		{"a new description", m1, []ToolSpec{aNewDesc}, 1},
		{"a new title", m1, []ToolSpec{aTitled}, 1},
		{"another model", m2, []ToolSpec{a, b}, 2},
	} {
		before := len(step.e.texts)
		texts := make([]string, len(step.tools))
		for i, tl := range step.tools {
			texts[i] = embedText(tl, "")
		}
		vecs, err := c.vectors(t.Context(), step.e, nil, zerolog.Nop(), texts)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(step.e.texts) - before; got != step.wantNew {
			t.Errorf("%s: embedded %d texts, want %d", step.name, got, step.wantNew)
		}
		for i, text := range texts {
			if want := float32(len(text)); vecs[i][0] != want {
				t.Errorf("%s: vector %d = %v, want the vector of %s", step.name, i, vecs[i], step.tools[i].Name)
			}
		}
	}
	if c.len() != 6 {
		t.Errorf("%d vectors cached, want 6", c.len())
	}
}

// FuzzEmbedText: the embedded text of any tool (names, titles and
// descriptions come from MCP servers) is valid UTF-8 when they are,
// bounded, and spells the name as lower-case words.
func FuzzEmbedText(f *testing.F) {
	f.Add("mcp__github__create_issue", "github", "Create issue", "Create a new issue")
	f.Add("getHTTPResponse-v2", "", "", "")
	f.Add("mcp__s__\u00c9t\u00e9_x", "s", "", "\u00e9t\u00e9")
	f.Fuzz(func(t *testing.T, name, server, title, desc string) {
		got := embedText(ToolSpec{Name: name, Title: title, Description: desc}, server)
		valid := utf8.ValidString(name) && utf8.ValidString(server) && utf8.ValidString(title) && utf8.ValidString(desc)
		if valid && !utf8.ValidString(got) {
			t.Fatalf("embedText(%q, %q, %q, %q) = %q, not UTF-8", name, server, title, desc, got)
		}
		if len(got) > maxEmbedText+len("…") {
			t.Fatalf("embedText is %d bytes, over %d", len(got), maxEmbedText)
		}
		if w := identWords(name); strings.ToLower(w) != w {
			t.Fatalf("identWords(%q) = %q, not lower-case", name, w)
		}
	})
}

func TestIdentWords(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"create_issue", "create issue"},
		{"create-issue", "create issue"},
		{"createIssue", "create issue"},
		{"API-patch-block-children", "api patch block children"},
		{"browser__navigate", "browser navigate"},
		{"whoami", "whoami"},
		{"", ""},
	} {
		if got := identWords(c.in); got != c.want {
			t.Errorf("identWords(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := embedText(ToolSpec{Name: "mcp__github__create_issue", Title: "Create issue", Description: "Create a new issue."}, "github"); got != "github: create issue. Create issue. Create a new issue." {
		t.Errorf("embedText = %q", got)
	}
}
