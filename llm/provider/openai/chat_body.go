package openai

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// langchaingo v0.1.14 cannot say most of what a chat completions request
// now carries: it has no per-call response_format (only a client-wide one,
// whose schema type cannot hold an arbitrary JSON Schema), no
// prompt_cache_key, its reasoning_effort is commented out, and its content
// parts know text and image_url only (a BinaryContent goes as a "binary"
// part OpenAI rejects; there is no input_audio or file part). So the body
// langchaingo builds is rewritten on its way out, in the HTTP tap: its
// "messages" are replaced by the ones built here from the request, and the
// fields above are set (langchaingo is given a placeholder conversation,
// so that it does not convert and encode one for nothing). langchaingo
// still builds the rest (model, tools, token cap, stop, temperature,
// stream and stream_options), sends the request and reads a non-streamed
// answer.

// bodyPatch is what one call sets in the chat completions body: each
// top-level field by name, as JSON.
type bodyPatch struct {
	fields map[string]json.RawMessage
}

// rewrite applies p to the JSON body of req.
func (p *bodyPatch) rewrite(req *http.Request) error {
	if req.Body == nil {
		return nil
	}
	raw, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return err
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(raw, &body); err != nil {
		return fmt.Errorf("the chat completions body langchaingo built is not a JSON object: %w", err)
	}
	for k, v := range p.fields {
		body[k] = v
	}
	// Written by hand, keys sorted: every value is valid JSON already (the
	// decoder's or json.Marshal's), so encoding/json's validating pass over
	// each again is saved.
	keys := make([]string, 0, len(body))
	size := 2
	for k, v := range body {
		keys = append(keys, k)
		size += len(k) + len(v) + 4
	}
	slices.Sort(keys)
	buf := bytes.NewBuffer(make([]byte, 0, size))
	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(jsonString(k))
		buf.WriteByte(':')
		buf.Write(body[k])
	}
	buf.WriteByte('}')
	out := buf.Bytes()
	req.Body = io.NopCloser(bytes.NewReader(out))
	req.ContentLength = int64(len(out))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(out)), nil }
	return nil
}

// chatPatch builds the patch of a request to model: its messages, and its
// answer schema, cache key and reasoning effort where it has them.
func chatPatch(model string, req *llm.Request) (*bodyPatch, error) {
	p := &bodyPatch{fields: map[string]json.RawMessage{}}
	msgs, err := json.Marshal(chatMessages(req))
	if err != nil {
		return nil, err
	}
	p.fields["messages"] = msgs
	if req.Output != nil {
		rf, err := responseFormat(req.Output)
		if err != nil {
			return nil, err
		}
		p.fields["response_format"] = rf
	}
	if req.CacheKey != "" && !req.NoCache && openAIFamily(model) {
		p.fields["prompt_cache_key"] = jsonString(req.CacheKey)
	}
	if e := reasoningEffort(model, req.Reasoning); e != "" {
		p.fields["reasoning_effort"] = jsonString(e)
	}
	return p, nil
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// chatMessage is one message of a chat completions request.
type chatMessage struct {
	Role string `json:"role"`
	// Content is a JSON string or an array of content parts.
	Content    json.RawMessage `json:"content"`
	ToolCalls  []chatToolCall  `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

type chatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// chatPart is a content part: text, image_url, input_audio or file.
type chatPart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url,omitempty"`
	InputAudio *struct {
		Data   string `json:"data"`
		Format string `json:"format"`
	} `json:"input_audio,omitempty"`
	File *struct {
		Filename string `json:"filename,omitempty"`
		FileData string `json:"file_data"`
	} `json:"file,omitempty"`
}

// chatMessages converts the conversation. A tool message takes text only,
// so the media of tool results (an image a tool returned) go in one user
// message after the turn's tool messages, each introduced by the call it
// answers; the tool message says so.
func chatMessages(req *llm.Request) []chatMessage {
	out := make([]chatMessage, 0, len(req.Messages)+1)
	if req.System != "" {
		out = append(out, chatMessage{Role: "system", Content: jsonString(req.System)})
	}
	for _, m := range req.Messages {
		switch m.Role {
		case llm.RoleAssistant:
			msg := chatMessage{Role: "assistant", Content: jsonString(m.Text)}
			for _, c := range m.ToolCalls {
				tc := chatToolCall{ID: c.ID, Type: "function"}
				tc.Function.Name = c.Name
				tc.Function.Arguments = string(c.Args)
				if strings.TrimSpace(tc.Function.Arguments) == "" {
					tc.Function.Arguments = "{}"
				}
				msg.ToolCalls = append(msg.ToolCalls, tc)
			}
			out = append(out, msg)
		case llm.RoleTool:
			var media []chatPart
			for _, r := range m.ToolResults {
				text, parts := splitParts(r.Content, r.Parts)
				if len(parts) > 0 {
					text += fmt.Sprintf("\n(%d attachment(s) of this result follow in the next user message.)", len(parts))
					media = append(media, chatPart{Type: "text", Text: fmt.Sprintf("Attachments of the result of tool call %s (%s):", r.CallID, r.Name)})
					media = append(media, parts...)
				}
				out = append(out, chatMessage{Role: "tool", Content: jsonString(text), ToolCallID: r.CallID})
			}
			if len(media) > 0 {
				b, _ := json.Marshal(media)
				out = append(out, chatMessage{Role: "user", Content: b})
			}
		default:
			out = append(out, chatMessage{Role: "user", Content: userContent(m.Text, m.Parts)})
		}
	}
	return out
}

// userContent is a user message's content: a string when it is text only,
// else an array of parts.
func userContent(text string, parts []llm.Part) json.RawMessage {
	var ps []chatPart
	if text != "" {
		ps = append(ps, chatPart{Type: "text", Text: text})
	}
	media := false
	for _, p := range parts {
		cp := chatPartOf(p)
		media = media || cp.Type != "text"
		ps = append(ps, cp)
	}
	if !media {
		var b strings.Builder
		for i, p := range ps {
			if i > 0 {
				b.WriteString("\n")
			}
			b.WriteString(p.Text)
		}
		return jsonString(b.String())
	}
	out, _ := json.Marshal(ps)
	return out
}

// splitParts returns a tool result's text (its content and text parts) and
// its media parts.
func splitParts(content string, parts []llm.Part) (string, []chatPart) {
	text := content
	var media []chatPart
	for _, p := range parts {
		cp := chatPartOf(p)
		if cp.Type == "text" {
			if text != "" {
				text += "\n"
			}
			text += cp.Text
			continue
		}
		media = append(media, cp)
	}
	return text, media
}

// chatPartOf maps a part to its chat completions form: an image by URL or
// data: URL, WAV or MP3 audio inline, a PDF as a file with its data, a text
// document as text. A part the API cannot carry (audio or a document by
// URL, another media type, one over maxPartBytes) is described in text.
func chatPartOf(p llm.Part) chatPart {
	mt := strings.ToLower(strings.TrimSpace(p.MediaType))
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = strings.TrimSpace(mt[:i])
	}
	describe := chatPart{Type: "text", Text: p.Describe()}
	if len(p.Data) > maxPartBytes {
		return describe
	}
	switch p.Kind {
	case llm.PartText:
		return chatPart{Type: "text", Text: p.Text}
	case llm.PartImage:
		url := p.URL
		if len(p.Data) > 0 {
			url = dataURL(mt, p.Data)
		}
		if url == "" {
			return describe
		}
		cp := chatPart{Type: "image_url", ImageURL: &struct {
			URL string `json:"url"`
		}{URL: url}}
		return cp
	case llm.PartAudio:
		format := audioFormat(mt)
		if len(p.Data) == 0 || format == "" {
			return describe
		}
		return chatPart{Type: "input_audio", InputAudio: &struct {
			Data   string `json:"data"`
			Format string `json:"format"`
		}{Data: base64.StdEncoding.EncodeToString(p.Data), Format: format}}
	case llm.PartDocument:
		switch {
		case len(p.Data) == 0:
		case mt == "application/pdf":
			name := p.Name
			if name == "" {
				name = "document.pdf"
			}
			return chatPart{Type: "file", File: &struct {
				Filename string `json:"filename,omitempty"`
				FileData string `json:"file_data"`
			}{Filename: name, FileData: dataURL(mt, p.Data)}}
		case isTextMedia(mt) && utf8.Valid(p.Data):
			head := "[document"
			if p.Name != "" {
				head += fmt.Sprintf(" %q", p.Name)
			}
			return chatPart{Type: "text", Text: head + " " + mt + "]\n" + string(p.Data)}
		}
	}
	return describe
}

func dataURL(mediaType string, data []byte) string {
	return "data:" + mediaType + ";base64," + base64.StdEncoding.EncodeToString(data)
}

// audioFormat is the input_audio format of a media type ("" for one the
// API does not take).
func audioFormat(mt string) string {
	switch mt {
	case "audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave":
		return "wav"
	case "audio/mpeg", "audio/mp3":
		return "mp3"
	}
	return ""
}

// isTextMedia reports whether a document of media type mt is text that can
// go to the model as it is.
func isTextMedia(mt string) bool {
	switch mt {
	case "application/json", "application/xml", "application/yaml", "application/x-yaml":
		return true
	}
	return strings.HasPrefix(mt, "text/")
}

// badOutput is the failure of a request whose answer schema cannot be sent.
func badOutput(name string, err error) *failure.Error {
	return &failure.Error{Kind: failure.Config, Source: failure.SourceModel, Name: name, Op: "generate",
		Message: "Request.Output.Schema is not a JSON object: " + err.Error(), Err: err}
}
