package mcp

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
)

// partsModel is the scripted model telling the agent what it accepts.
type partsModel struct {
	*llm.Scripted
	caps llm.Capabilities
}

func (m partsModel) Capabilities() llm.Capabilities { return m.caps }

type shotArgs struct {
	Image int `json:"image,omitempty"` // bytes of image data
	Text  int `json:"text,omitempty"`  // bytes of text
	PDF   int `json:"pdf,omitempty"`   // bytes of an embedded PDF resource
	Audio int `json:"audio,omitempty"` // bytes of audio
}

// mediaServer is an in-process MCP server whose tool returns the media it
// is asked for.
func mediaServer() *gomcp.Server {
	s := gomcp.NewServer(&gomcp.Implementation{Name: "media", Version: "1.0.0"}, nil)
	gomcp.AddTool(s, &gomcp.Tool{Name: "shot", Description: "Return media."},
		func(ctx context.Context, req *gomcp.CallToolRequest, in shotArgs) (*gomcp.CallToolResult, any, error) {
			res := &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: "here" + strings.Repeat(".", in.Text)}}}
			if in.Image > 0 {
				res.Content = append(res.Content, &gomcp.ImageContent{MIMEType: "image/png", Data: bytes.Repeat([]byte{0x89}, in.Image)})
			}
			if in.Audio > 0 {
				res.Content = append(res.Content, &gomcp.AudioContent{MIMEType: "audio/wav", Data: bytes.Repeat([]byte{1}, in.Audio)})
			}
			if in.PDF > 0 {
				res.Content = append(res.Content, &gomcp.EmbeddedResource{Resource: &gomcp.ResourceContents{
					URI: "file:///report.pdf", MIMEType: "application/pdf", Blob: bytes.Repeat([]byte{'%'}, in.PDF)}})
			}
			return res, nil, nil
		})
	return s
}

// TestMediaResultsReachModel: an MCP server's image, audio and embedded
// blob results reach a model that takes them as parts, unspilled; a model
// that does not, or a part over the agent's MaxPartBytes, gets the spill
// (the parts saved to files, the pointer text) as before.
func TestMediaResultsReachModel(t *testing.T) {
	images := llm.Capabilities{Accepts: []llm.PartKind{llm.PartImage}}
	all := llm.Capabilities{Accepts: []llm.PartKind{llm.PartImage, llm.PartAudio, llm.PartDocument}}
	cases := []struct {
		name      string
		caps      llm.Capabilities
		maxPart   int64
		args      map[string]any
		wantParts []llm.PartKind
		spilled   bool
	}{
		{"small image to a text model", llm.Capabilities{}, 0, map[string]any{"image": 1000}, nil, false},
		{"small image to an image model", images, 0, map[string]any{"image": 1000}, []llm.PartKind{llm.PartImage}, false},
		{"large image to an image model", images, 0, map[string]any{"image": 200_000}, []llm.PartKind{llm.PartImage}, false},
		{"large image to a text model", llm.Capabilities{}, 0, map[string]any{"image": 200_000}, nil, true},
		{"image over MaxPartBytes", images, 100_000, map[string]any{"image": 200_000}, nil, true},
		{"large text and image", images, 0, map[string]any{"image": 200_000, "text": 100_000}, []llm.PartKind{llm.PartImage}, true},
		{"image, audio and pdf", all, 0, map[string]any{"image": 70_000, "audio": 70_000, "pdf": 70_000},
			[]llm.PartKind{llm.PartImage, llm.PartAudio, llm.PartDocument}, false},
		{"pdf to an image model", images, 0, map[string]any{"image": 70_000, "pdf": 70_000}, []llm.PartKind{llm.PartImage}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newManager(t, quickConfig(ServerConfig{Name: "s", Server: mediaServer()}))
			var mu sync.Mutex
			var got llm.ToolResult
			model := partsModel{caps: c.caps, Scripted: llm.NewScripted(
				llm.Calls(llm.CallTool("c1", "mcp__s__shot", c.args)),
				llm.React(func(req *llm.Request) llm.Step {
					mu.Lock()
					defer mu.Unlock()
					got = req.Messages[len(req.Messages)-1].ToolResults[0]
					return llm.Say("seen")
				}))}
			a, err := agent.New(context.Background(), agent.Config{Model: model, Toolsets: []agent.Toolset{m.Toolset()},
				Permissions: agent.AllowAll(), MaxPartBytes: c.maxPart})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.Run(context.Background(), "take a shot"); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			var kinds []llm.PartKind
			for _, p := range got.Parts {
				kinds = append(kinds, p.Kind)
				if len(p.Data) == 0 {
					t.Errorf("a %s part without data", p.Kind)
				}
			}
			if len(kinds) != len(c.wantParts) {
				t.Fatalf("parts = %v, want %v", kinds, c.wantParts)
			}
			for i := range kinds {
				if kinds[i] != c.wantParts[i] {
					t.Errorf("parts = %v, want %v", kinds, c.wantParts)
				}
			}
			if spilled := strings.Contains(got.Content, "too large to show at once"); spilled != c.spilled {
				t.Errorf("spilled = %v, want %v: %.400s", spilled, c.spilled, got.Content)
			}
			if !c.spilled && len(c.wantParts) == 0 && !strings.Contains(got.Content, "[image: image/png, 1000 bytes]") {
				t.Errorf("the image is not described: %.400s", got.Content)
			}
		})
	}
}
