package a2a

import (
	"bytes"
	"context"
	"io"
	"iter"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
)

// filesPeer is a peer whose answer is an artifact of file and data parts:
// an image by bytes, a PDF by URI, and a JSON data part.
type filesPeer struct{ image []byte }

func (p filesPeer) Execute(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2ago.Event, error] {
	return func(yield func(a2ago.Event, error) bool) {
		if !yield(a2ago.NewSubmittedTask(ec, ec.Message), nil) {
			return
		}
		img := a2ago.NewRawPart(p.image)
		img.MediaType, img.Filename = "image/png", "chart.png"
		pdf := a2ago.NewFileURLPart("https://files.example.com/report.pdf", "application/pdf")
		pdf.Filename = "report.pdf"
		art := a2ago.NewArtifactEvent(ec, a2ago.NewTextPart("the chart:"), img, pdf,
			a2ago.NewDataPart(map[string]any{"total": 42}))
		art.LastChunk = true
		if !yield(art, nil) {
			return
		}
		yield(a2ago.NewStatusUpdateEvent(ec, a2ago.TaskStateCompleted, nil), nil)
	}
}

func (filesPeer) Cancel(ctx context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2ago.Event, error] {
	return func(yield func(a2ago.Event, error) bool) {
		yield(a2ago.NewStatusUpdateEvent(ec, a2ago.TaskStateCanceled, nil), nil)
	}
}

type partsModel struct {
	*llm.Scripted
	caps llm.Capabilities
}

func (m partsModel) Capabilities() llm.Capabilities { return m.caps }

// TestFilePartsReachModel: a remote agent's file parts (bytes and URI)
// reach a model that takes them as parts; its data part is JSON text; a
// model that takes no media reads them described.
func TestFilePartsReachModel(t *testing.T) {
	image := bytes.Repeat([]byte{0x89}, 5000)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	hs := httptest.NewServer(a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(filesPeer{image: image}, a2asrv.WithLogger(quiet))))
	defer hs.Close()
	card := &a2ago.AgentCard{Name: "charts", Description: "draws charts", Version: "1",
		Capabilities:        a2ago.AgentCapabilities{Streaming: true},
		SupportedInterfaces: []*a2ago.AgentInterface{a2ago.NewAgentInterface(hs.URL, a2ago.TransportProtocolJSONRPC)}}
	cases := []struct {
		name        string
		caps        llm.Capabilities
		want        []llm.Part // kind, media type, URL, name; data length checked for bytes
		wantContent []string
	}{
		{"media model", llm.Capabilities{Accepts: []llm.PartKind{llm.PartImage, llm.PartDocument}},
			[]llm.Part{{Kind: llm.PartImage, MediaType: "image/png", Name: "chart.png", Data: image},
				{Kind: llm.PartDocument, MediaType: "application/pdf", URL: "https://files.example.com/report.pdf", Name: "report.pdf"}},
			[]string{"the chart:", `{"total":42}`, "(attached: part 1)", "(attached: part 2)"}},
		{"text model", llm.Capabilities{}, nil,
			[]string{"the chart:", `{"total":42}`, "[image: image/png, 5000 bytes]", "[resource link report.pdf https://files.example.com/report.pdf]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := ctxT(t)
			ts, err := NewToolset(ctx, ToolsetConfig{Peers: []Peer{{Name: "w", Card: card}}, Policy: fastPolicy()})
			if err != nil {
				t.Fatal(err)
			}
			defer ts.Close()
			var mu sync.Mutex
			var got llm.ToolResult
			model := partsModel{caps: c.caps, Scripted: llm.NewScripted(
				llm.Calls(llm.CallTool("d1", "a2a__w", map[string]string{"message": "draw"})),
				llm.React(func(req *llm.Request) llm.Step {
					mu.Lock()
					defer mu.Unlock()
					got = req.Messages[len(req.Messages)-1].ToolResults[0]
					return llm.Say("drawn")
				}))}
			a, err := agent.New(ctx, agent.Config{Model: model, Toolsets: []agent.Toolset{ts}, Permissions: agent.AllowAll()})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.Run(ctx, "draw a chart"); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got.Parts) != len(c.want) {
				t.Fatalf("parts = %+v, want %d", got.Parts, len(c.want))
			}
			for i, w := range c.want {
				p := got.Parts[i]
				if p.Kind != w.Kind || p.MediaType != w.MediaType || p.URL != w.URL || p.Name != w.Name || !bytes.Equal(p.Data, w.Data) {
					t.Errorf("part %d = %s %s %q %q (%d bytes), want %s %s %q %q (%d bytes)", i, p.Kind, p.MediaType, p.URL, p.Name, len(p.Data),
						w.Kind, w.MediaType, w.URL, w.Name, len(w.Data))
				}
			}
			for _, s := range c.wantContent {
				if !strings.Contains(got.Content, s) {
					t.Errorf("content lacks %q: %s", s, got.Content)
				}
			}
		})
	}
}
