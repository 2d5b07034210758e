package skills

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-dev/switchboard/agent"
	"github.com/switchboard-dev/switchboard/llm"
)

type partsModel struct {
	*llm.Scripted
	caps llm.Capabilities
}

func (m partsModel) Capabilities() llm.Capabilities { return m.caps }

// TestReadFileAsPart: a whole bundled image read by a run whose model
// takes images reaches it as an image part; for other models, or a page of
// a larger file, it stays base64 text.
func TestReadFileAsPart(t *testing.T) {
	root := t.TempDir()
	dir := writeSkill(t, root, "charts", "name: charts\ndescription: charts\n", "Body.\n")
	img := append([]byte{0x89, 'P', 'N', 'G', 0}, bytes.Repeat([]byte{7}, 95)...)
	if err := os.WriteFile(filepath.Join(dir, "logo.png"), img, 0o644); err != nil {
		t.Fatal(err)
	}
	images := llm.Capabilities{Accepts: []llm.PartKind{llm.PartImage}}
	cases := []struct {
		name     string
		caps     llm.Capabilities
		maxRead  int
		wantPart bool
		wantText string
	}{
		{"image model", images, 0, true, "[image file logo.png (image/png), all 100 bytes, attached]"},
		{"text model", llm.Capabilities{}, 0, false, "[binary file logo.png (image/png), bytes 0-100 of 100, base64]"},
		{"a page of the image", images, 60, false, "[binary file logo.png (image/png), bytes 0-60 of 100, base64]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts, err := New(context.Background(), Config{Roots: []Root{{Path: root}}, MaxReadBytes: c.maxRead})
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var got llm.ToolResult
			model := partsModel{caps: c.caps, Scripted: llm.NewScripted(
				llm.Calls(llm.CallTool("r1", ToolReadFile, map[string]string{"skill": "charts", "path": "logo.png"})),
				llm.React(func(req *llm.Request) llm.Step {
					mu.Lock()
					defer mu.Unlock()
					got = req.Messages[len(req.Messages)-1].ToolResults[0]
					return llm.Say("ok")
				}))}
			a, err := agent.New(context.Background(), agent.Config{Model: model, Toolsets: []agent.Toolset{ts}, Permissions: agent.AllowAll()})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.Run(context.Background(), "show the logo"); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if has := len(got.Parts) == 1 && got.Parts[0].Kind == llm.PartImage && bytes.Equal(got.Parts[0].Data, img); has != c.wantPart {
				t.Errorf("image part = %v, want %v (%+v)", has, c.wantPart, got.Parts)
			}
			if !strings.Contains(got.Content, c.wantText) {
				t.Errorf("content lacks %q: %s", c.wantText, got.Content)
			}
		})
	}
}
