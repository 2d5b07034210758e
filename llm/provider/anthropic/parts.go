package anthropic

import (
	b64 "encoding/base64"
	"encoding/json"
	"strings"

	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/wire"
)

// mediaSource is an image's or a document's source: base64 data of a
// media type, a URL the API fetches, or (documents) plain text.
type mediaSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

// imageTypes are the image media types the API takes.
var imageTypes = map[string]bool{"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true}

// partBlocks converts parts to content blocks: an image block (base64 or
// URL source) for an image of a type the API takes, a document block for a
// PDF (base64 or URL) or a text file (a text source, which the API takes
// only as text/plain: markdown, CSV and the like are text to it), a text
// block for a text part; any other part (audio, an image or document of a
// type the API does not read, a part with neither data nor URL) becomes
// its one-line description, so that the model knows it was there.
func partBlocks(parts []llm.Part) []anthropicBlock {
	var out []anthropicBlock
	for _, p := range parts {
		if b, ok := partBlock(p); ok {
			out = append(out, b)
		}
	}
	return out
}

func partBlock(p llm.Part) (anthropicBlock, bool) {
	mt := strings.ToLower(strings.TrimSpace(p.MediaType))
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = strings.TrimSpace(mt[:i])
	}
	switch {
	case p.Kind == llm.PartText:
		return anthropicBlock{Type: "text", Text: p.Text}, p.Text != ""
	case p.Kind == llm.PartImage && imageTypes[mt] && len(p.Data) > 0:
		return anthropicBlock{Type: "image", Source: &mediaSource{Type: "base64", MediaType: mt, Data: base64(p.Data)}}, true
	case p.Kind == llm.PartImage && fetchable(p.URL) && len(p.Data) == 0:
		return anthropicBlock{Type: "image", Source: &mediaSource{Type: "url", URL: p.URL}}, true
	case p.Kind == llm.PartDocument && mt == "application/pdf" && len(p.Data) > 0:
		return anthropicBlock{Type: "document", Title: p.Name, Source: &mediaSource{Type: "base64", MediaType: mt, Data: base64(p.Data)}}, true
	case p.Kind == llm.PartDocument && mt == "application/pdf" && fetchable(p.URL):
		return anthropicBlock{Type: "document", Title: p.Name, Source: &mediaSource{Type: "url", URL: p.URL}}, true
	case p.Kind == llm.PartDocument && strings.HasPrefix(mt, "text/") && len(p.Data) > 0:
		return anthropicBlock{Type: "document", Title: p.Name,
			Source: &mediaSource{Type: "text", MediaType: "text/plain", Data: strings.ToValidUTF8(string(p.Data), "\uFFFD")}}, true
	}
	d := p.Describe()
	return anthropicBlock{Type: "text", Text: d}, d != ""
}

// fetchable reports whether the API can fetch a URL: http or https (not a
// data: URL left undecoded, nor another provider's gs: and the like).
func fetchable(url string) bool {
	u := strings.ToLower(url)
	return strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://")
}

// toolResultContent is a tool_result's content: its text as a JSON string,
// or, when the result has parts, an array of blocks (its text, then a
// block per part; the API takes text, image and document blocks there).
func toolResultContent(r llm.ToolResult) json.RawMessage {
	if len(r.Parts) == 0 {
		return wire.JSONString(r.Content)
	}
	var blocks []anthropicBlock
	if r.Content != "" {
		blocks = append(blocks, anthropicBlock{Type: "text", Text: r.Content})
	}
	blocks = append(blocks, partBlocks(r.Parts)...)
	if len(blocks) == 0 {
		return wire.JSONString("")
	}
	b, err := json.Marshal(blocks)
	if err != nil {
		return wire.JSONString(r.Content)
	}
	return b
}

// base64 is data in standard base64, as the API takes it.
func base64(data []byte) string { return b64.StdEncoding.EncodeToString(data) }
