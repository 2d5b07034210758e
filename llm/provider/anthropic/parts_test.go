package anthropic

import (
	"encoding/json"
	"testing"

	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/providertest"
)

// pixel is a 1×1 PNG.
var pixel = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\xa7\x35\x81\x84\x00\x00\x00\x00IEND\xaeB`\x82")

func TestPartBlocks(t *testing.T) {
	tests := []struct {
		name string
		part llm.Part
		want string
	}{
		{"image bytes", llm.ImagePart("image/png", pixel),
			`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + base64(pixel) + `"}}`},
		{"image media type with parameters", llm.Part{Kind: llm.PartImage, MediaType: "IMAGE/JPEG; q=1", Data: []byte{1}},
			`{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"AQ=="}}`},
		{"image URL", llm.Part{Kind: llm.PartImage, URL: "https://example.com/a.jpg"},
			`{"type":"image","source":{"type":"url","url":"https://example.com/a.jpg"}}`},
		{"PDF bytes", llm.DocumentPart("q3.pdf", "application/pdf", []byte("%PDF-1.7")),
			`{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0xLjc="},"title":"q3.pdf"}`},
		{"PDF URL", llm.Part{Kind: llm.PartDocument, MediaType: "application/pdf", URL: "https://example.com/q3.pdf"},
			`{"type":"document","source":{"type":"url","url":"https://example.com/q3.pdf"}}`},
		{"markdown is a plain-text document", llm.DocumentPart("notes.md", "text/markdown", []byte("# Notes\n- one")),
			`{"type":"document","source":{"type":"text","media_type":"text/plain","data":"# Notes\n- one"},"title":"notes.md"}`},
		{"text part", llm.TextPart("see above"), `{"type":"text","text":"see above"}`},
		{"a gs: URL is described", llm.Part{Kind: llm.PartImage, MediaType: "image/png", URL: "gs://bucket/a.png"},
			`{"type":"text","text":"[image image/png at gs://bucket/a.png]"}`},
		{"audio is described", llm.Part{Kind: llm.PartAudio, MediaType: "audio/wav", Data: make([]byte, 10)},
			`{"type":"text","text":"[audio audio/wav, 10 bytes]"}`},
		{"a BMP is described", llm.ImagePart("image/bmp", make([]byte, 4)), `{"type":"text","text":"[image image/bmp, 4 bytes]"}`},
		{"a Word file is described", llm.DocumentPart("a.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", []byte("PK")),
			`{"type":"text","text":"[document \"a.docx\" application/vnd.openxmlformats-officedocument.wordprocessingml.document, 2 bytes]"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, ok := partBlock(tt.part)
			if !ok {
				t.Fatal("no block")
			}
			got, _ := json.Marshal(b)
			providertest.JSONEqual(t, "block", got, tt.want)
		})
	}
	if _, ok := partBlock(llm.TextPart("")); ok {
		t.Error("an empty text part made a block")
	}
}

// TestImagesRoundTrip: an image with the prompt goes as an image block
// after the text; a tool result with an image goes back as a tool_result
// whose content is its text and the image; a result without parts keeps
// its string content.
func TestImagesRoundTrip(t *testing.T) {
	p := providertest.NewServer(t, jsonReply(t, "anthropic_messages_tools.json"),
		providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte(providertest.AnthropicFinal)})
	m := newTestAnthropic(t, p)
	if !llm.CapabilitiesOf(m).Accept(llm.PartImage) || !llm.CapabilitiesOf(m).Accept(llm.PartDocument) || llm.CapabilitiesOf(m).Accept(llm.PartAudio) {
		t.Errorf("capabilities = %+v", llm.CapabilitiesOf(m))
	}
	req := &llm.Request{Tools: providertest.WeatherTools(), Messages: []llm.Message{{Role: llm.RoleUser, Text: "Where is this, and its weather?",
		Parts: []llm.Part{llm.ImagePart("image/png", pixel)}}}}
	resp, err := m.Generate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	req.Messages = append(req.Messages, resp.Message, llm.Message{Role: llm.RoleTool, ToolResults: []llm.ToolResult{
		{CallID: "toolu_paris", Name: "get_weather", Content: "18°C; radar:", Parts: []llm.Part{llm.ImagePart("image/png", pixel)}},
		{CallID: "toolu_oslo", Name: "get_weather", Content: "4°C"}}})
	if _, err := m.Generate(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	reqs := p.Requests()
	user := providertest.Path(reqs[0].Body, "messages", 0, "content")
	if providertest.Path(user, 0, "type") != "text" || providertest.Path(user, 1, "type") != "image" ||
		providertest.Path(user, 1, "source", "media_type") != "image/png" || providertest.Path(user, 1, "source", "data") != base64(pixel) {
		t.Errorf("user content = %v", user)
	}
	results := providertest.Path(reqs[1].Body, "messages", 2, "content")
	img := providertest.Path(results, 0, "content")
	if providertest.Path(img, 0, "text") != "18°C; radar:" || providertest.Path(img, 1, "type") != "image" ||
		providertest.Path(img, 1, "source", "data") != base64(pixel) || providertest.Path(results, 1, "content") != "4°C" {
		t.Errorf("tool results = %v", results)
	}
	// The first turn's image goes again as it went (in the cached prefix;
	// its breakpoint has moved on).
	first, _ := providertest.Path(reqs[0].Body, "messages", 0, "content", 1).(map[string]any)
	if first == nil {
		t.Fatalf("no image in %s", reqs[0].Raw)
	}
	delete(first, "cache_control")
	if !jsonSame(first, providertest.Path(reqs[1].Body, "messages", 0, "content", 1)) {
		t.Error("the first turn's image changed")
	}
}
