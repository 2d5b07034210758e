package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
)

// capModel is the scripted model under another name, telling the agent what
// it accepts (llm.Describer), as a provider's model does.
type capModel struct {
	*llm.Scripted
	name string
	caps llm.Capabilities
}

func (m capModel) Name() string {
	if m.name == "" {
		return m.Scripted.Name()
	}
	return m.name
}
func (m capModel) Capabilities() llm.Capabilities { return m.caps }

// requests records the requests a scripted model is sent.
type requests struct {
	mu   sync.Mutex
	reqs []llm.Request
}

// step answers text, recording the request.
func (rs *requests) step(text string) llm.Step {
	return llm.React(func(req *llm.Request) llm.Step {
		rs.mu.Lock()
		rs.reqs = append(rs.reqs, *req)
		rs.mu.Unlock()
		return llm.Say(text)
	})
}

// call asks for a tool call, recording the request.
func (rs *requests) call(c llm.ToolCall) llm.Step {
	return llm.React(func(req *llm.Request) llm.Step {
		rs.mu.Lock()
		rs.reqs = append(rs.reqs, *req)
		rs.mu.Unlock()
		return llm.Calls(c)
	})
}

func (rs *requests) last(t *testing.T) llm.Request {
	t.Helper()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if len(rs.reqs) == 0 {
		t.Fatal("the model was sent no request")
	}
	return rs.reqs[len(rs.reqs)-1]
}

func testPNG(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile("internal/tokens/testdata/media/1000x500.png")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var (
	imagesOnly = llm.Capabilities{Accepts: []llm.PartKind{llm.PartImage}}
	allMedia   = llm.Capabilities{Accepts: []llm.PartKind{llm.PartImage, llm.PartAudio, llm.PartDocument}}
)

// TestInputParts: a run's Input parts reach the model in its first user
// message when it accepts them, as text describing them when it does not
// (or when they pass the part limit); the tools do not see the Input.
func TestInputParts(t *testing.T) {
	png := testPNG(t)
	pdf := []byte("%PDF-1.4 /Type /Page")
	cases := []struct {
		name     string
		caps     llm.Capabilities
		maxPart  int64
		parts    []llm.Part
		wantKind []llm.PartKind // of the first message's parts as sent
		wantText string         // in a described part
	}{
		{"image to an image model", imagesOnly, 0, []llm.Part{llm.ImagePart("image/png", png)},
			[]llm.PartKind{llm.PartImage}, ""},
		{"image to a text model", llm.Capabilities{}, 0, []llm.Part{llm.ImagePart("image/png", png)},
			[]llm.PartKind{llm.PartText}, "[image image/png, 3388 bytes] (not shown"},
		{"pdf to an image-only model", imagesOnly, 0,
			[]llm.Part{llm.ImagePart("image/png", png), llm.DocumentPart("report.pdf", "application/pdf", pdf)},
			[]llm.PartKind{llm.PartImage, llm.PartText}, `[document "report.pdf" application/pdf, 20 bytes]`},
		{"pdf to a document model", allMedia, 0, []llm.Part{llm.DocumentPart("report.pdf", "application/pdf", pdf)},
			[]llm.PartKind{llm.PartDocument}, ""},
		{"image over MaxPartBytes", imagesOnly, 1000, []llm.Part{llm.ImagePart("image/png", png)},
			[]llm.PartKind{llm.PartText}, "[image image/png, 3388 bytes]"},
		{"image over the provider's MaxPartBytes", llm.Capabilities{Accepts: imagesOnly.Accepts, MaxPartBytes: 3000}, 0,
			[]llm.Part{llm.ImagePart("image/png", png)}, []llm.PartKind{llm.PartText}, "[image image/png, 3388 bytes]"},
		{"image by URL", imagesOnly, 1000, []llm.Part{{Kind: llm.PartImage, MediaType: "image/png", URL: "https://example.com/a.png"}},
			[]llm.PartKind{llm.PartImage}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var rs requests
			var sawInput bool
			look := tool("look", func(ctx context.Context, _ json.RawMessage) (*agent.Result, error) {
				_, sawInput = agent.InputFrom(ctx)
				return agent.TextResult("looked"), nil
			})
			m := capModel{Scripted: llm.NewScripted(rs.call(llm.CallTool("c1", "look", nil)), rs.step("a cat")), caps: c.caps}
			a := newAgent(t, agent.Config{Model: m, Tools: []agent.Tool{look}, MaxPartBytes: c.maxPart})
			ctx := agent.WithInput(context.Background(), agent.Input{Parts: c.parts})
			evs, err := collect(t, a.Stream(ctx, "What is in the picture?"))
			if err != nil {
				t.Fatal(err)
			}
			if sawInput {
				t.Error("the tool's context carries the run's Input")
			}
			first := rs.last(t).Messages[0]
			if first.Role != llm.RoleUser || first.Text != "What is in the picture?" {
				t.Fatalf("first message = %+v", first)
			}
			if len(first.Parts) != len(c.wantKind) {
				t.Fatalf("the model got %d parts, want %d", len(first.Parts), len(c.wantKind))
			}
			for i, p := range first.Parts {
				if p.Kind != c.wantKind[i] {
					t.Errorf("part %d is %s, want %s", i, p.Kind, c.wantKind[i])
				}
				if p.Kind == llm.PartText && !strings.Contains(p.Text, c.wantText) {
					t.Errorf("part %d says %q, want it to contain %q", i, p.Text, c.wantText)
				}
				if p.Kind == llm.PartImage && p.URL == "" && len(p.Data) != len(png) {
					t.Errorf("the image part has %d bytes, want %d", len(p.Data), len(png))
				}
			}
			// The session keeps the parts as given, whatever the model took.
			if evs[0].Type != agent.EventRunStarted || len(evs[0].Parts) != len(c.parts) {
				t.Errorf("EventRunStarted carries %d parts, want %d", len(evs[0].Parts), len(c.parts))
			}
		})
	}
}

// TestToolResultParts: media parts of a Go tool's result reach the model
// as the tool result's parts when it takes them; otherwise as text in the
// result's content.
func TestToolResultParts(t *testing.T) {
	png := testPNG(t)
	snap := func(_ context.Context, _ json.RawMessage) (*agent.Result, error) {
		return &agent.Result{Parts: []agent.Part{{Type: agent.PartText, Text: "screenshot:"},
			{Type: agent.PartImage, MIMEType: "image/png", Data: png},
			{Type: agent.PartResourceLink, URI: "https://example.com/doc.pdf", MIMEType: "application/pdf", Name: "doc"},
			{Type: agent.PartResourceLink, URI: "file:///tmp/x.png", MIMEType: "image/png", Name: "local"}}}, nil
	}
	cases := []struct {
		name        string
		caps        llm.Capabilities
		wantParts   []llm.PartKind
		wantContent []string
	}{
		{"image model", imagesOnly, []llm.PartKind{llm.PartImage},
			[]string{"screenshot:", "[image image/png, 3388 bytes] (attached: part 1)", "[resource link doc https://example.com/doc.pdf]"}},
		{"document model", allMedia, []llm.PartKind{llm.PartImage, llm.PartDocument},
			[]string{"(attached: part 1)", `[document "doc" application/pdf at https://example.com/doc.pdf] (attached: part 2)`, "[resource link local file:///tmp/x.png]"}},
		{"text model", llm.Capabilities{}, nil,
			[]string{"screenshot:", "[image: image/png, 3388 bytes]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var rs requests
			m := capModel{Scripted: llm.NewScripted(llm.Calls(llm.CallTool("c1", "snap", nil)), rs.step("done")), caps: c.caps}
			var finished *agent.Result
			a := newAgent(t, agent.Config{Model: m, Tools: []agent.Tool{tool("snap", snap)}})
			evs, err := collect(t, a.Stream(context.Background(), "snap it"))
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range evs {
				if ev.Type == agent.EventToolFinished {
					finished = ev.Result
				}
			}
			msgs := rs.last(t).Messages
			tr := msgs[len(msgs)-1].ToolResults[0]
			var kinds []llm.PartKind
			for _, p := range tr.Parts {
				kinds = append(kinds, p.Kind)
			}
			if !slices.Equal(kinds, c.wantParts) {
				t.Errorf("tool result parts = %v, want %v", kinds, c.wantParts)
			}
			for _, s := range c.wantContent {
				if !strings.Contains(tr.Content, s) {
					t.Errorf("content %q lacks %q", tr.Content, s)
				}
			}
			if finished == nil || len(finished.Parts) != 4 || len(finished.Parts[1].Data) != len(png) {
				t.Errorf("EventToolFinished result = %+v, want the tool's 4 parts (small data kept)", finished)
			}
		})
	}
}

// TestPartsLeftOutOfEvents: events do not carry the data of big parts.
func TestPartsLeftOutOfEvents(t *testing.T) {
	big := make([]byte, 100<<10)
	m := capModel{Scripted: llm.NewScripted(llm.Calls(llm.CallTool("c1", "big", nil)), llm.Say("ok")), caps: imagesOnly}
	a := newAgent(t, agent.Config{Model: m, Tools: []agent.Tool{tool("big", func(context.Context, json.RawMessage) (*agent.Result, error) {
		return &agent.Result{Parts: []agent.Part{{Type: agent.PartImage, MIMEType: "image/png", Data: big}}}, nil
	})}})
	ctx := agent.WithInput(context.Background(), agent.Input{Parts: []llm.Part{llm.ImagePart("image/png", big)}})
	evs, err := collect(t, a.Stream(ctx, "look"))
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 20<<10 {
			t.Errorf("a %s event is %d bytes encoded", ev.Type, len(b))
		}
	}
	if p := evs[0].Parts; len(p) != 1 || !strings.Contains(p[0].Text, "[image image/png, 102400 bytes] (data left out of the event)") {
		t.Errorf("EventRunStarted parts = %+v", p)
	}
}

// TestImageTokensInContext: the prompt estimate counts an image by the
// provider's rule of the model's name (a 1000x500 PNG: 667 tokens for
// Anthropic, 425 for OpenAI), and a described one as its text.
func TestImageTokensInContext(t *testing.T) {
	png := testPNG(t)
	history := func(name string, caps llm.Capabilities, parts []llm.Part) int {
		m := capModel{Scripted: llm.NewScripted(llm.Say("ok")), name: name, caps: caps}
		a := newAgent(t, agent.Config{Model: m})
		ctx := agent.WithInput(context.Background(), agent.Input{Parts: parts})
		evs, err := collect(t, a.Stream(ctx, "look"))
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if ev.Type == agent.EventTurnStarted {
				return ev.Context.History
			}
		}
		t.Fatal("no EventTurnStarted")
		return 0
	}
	img := []llm.Part{llm.ImagePart("image/png", png)}
	for _, c := range []struct {
		name string
		caps llm.Capabilities
		want int
	}{
		{"anthropic/claude-sonnet-4-5", imagesOnly, 667},
		{"openai/gpt-4o", imagesOnly, 425},
		{"gemini/gemini-2.5-flash", imagesOnly, 516},
	} {
		base := history(c.name, c.caps, nil)
		if got := history(c.name, c.caps, img) - base; got != c.want {
			t.Errorf("%s: the image adds %d tokens, want %d", c.name, got, c.want)
		}
	}
	// Described, it costs its few words, not its bytes.
	if got := history("anthropic/claude-sonnet-4-5", llm.Capabilities{}, img) - history("anthropic/claude-sonnet-4-5", llm.Capabilities{}, nil); got <= 0 || got > 40 {
		t.Errorf("a described image adds %d tokens", got)
	}
}

// TestPartsSurviveSessionStore: the parts of a run's input are stored with
// its session and reach the model again in the next run.
func TestPartsSurviveSessionStore(t *testing.T) {
	png := testPNG(t)
	store := agent.NewMemoryStore(agent.MemoryStoreOptions{})
	var rs requests
	m := capModel{Scripted: llm.NewScripted(rs.step("a chart"), rs.step("still a chart"), rs.step("a chart again")), caps: imagesOnly}
	a := newAgent(t, agent.Config{Model: m, Durable: agent.Durability{Sessions: store, Runs: store}})
	s := a.NewSession()
	ctx := agent.WithInput(context.Background(), agent.Input{Parts: []llm.Part{llm.ImagePart("image/png", png)}})
	if _, err := s.Run(ctx, "what is this?"); err != nil {
		t.Fatal(err)
	}
	rec, err := store.LoadSession(context.Background(), s.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.History) == 0 || len(rec.History[0].Parts) != 1 || len(rec.History[0].Parts[0].Data) != len(png) {
		t.Fatalf("stored history lost the image: %+v", rec.History)
	}
	if _, err := s.Run(context.Background(), "and now?"); err != nil {
		t.Fatal(err)
	}
	if p := rs.last(t).Messages[0].Parts; len(p) != 1 || len(p[0].Data) != len(png) {
		t.Errorf("the next run's first message has parts %+v", p)
	}
	// A finished run resumed says again what its input was, parts included.
	ans, err := s.Run(ctx, "once more")
	if err != nil {
		t.Fatal(err)
	}
	evs, err := collect(t, a.ResumeStream(context.Background(), ans.Run))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) == 0 || evs[0].Type != agent.EventRunStarted || evs[0].Text != "once more" || len(evs[0].Parts) != 1 || len(evs[0].Parts[0].Data) != len(png) {
		t.Errorf("resumed events start with %+v", evs)
	}
}
