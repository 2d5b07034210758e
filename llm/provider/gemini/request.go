package gemini

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/wire"
)

// gmRequest is the body of generateContent and streamGenerateContent.
type gmRequest struct {
	SystemInstruction *gmContent   `json:"systemInstruction,omitempty"`
	Contents          []gmContent  `json:"contents"`
	Tools             []gmTool     `json:"tools,omitempty"`
	GenerationConfig  *gmGenConfig `json:"generationConfig,omitempty"`
}

// gmContent is one turn: its role ("user" or "model") and parts. Parts are
// raw JSON, so that an answer's parts go back byte for byte.
type gmContent struct {
	Role  string            `json:"role,omitempty"`
	Parts []json.RawMessage `json:"parts"`
}

// gmPart is a part of a content, of either direction.
type gmPart struct {
	Text             string          `json:"text,omitempty"`
	Thought          bool            `json:"thought,omitempty"`
	ThoughtSignature string          `json:"thoughtSignature,omitempty"`
	InlineData       *gmBlob         `json:"inlineData,omitempty"`
	FileData         *gmFile         `json:"fileData,omitempty"`
	FunctionCall     *gmCall         `json:"functionCall,omitempty"`
	FunctionResponse *gmFuncResponse `json:"functionResponse,omitempty"`
}

type gmBlob struct {
	MimeType string `json:"mimeType"`
	Data     []byte `json:"data"` // base64 in JSON
}

type gmFile struct {
	MimeType string `json:"mimeType,omitempty"`
	FileURI  string `json:"fileUri"`
}

type gmCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

type gmFuncResponse struct {
	ID       string          `json:"id,omitempty"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
	// Parts are media the function returned (Gemini 3 and later).
	Parts []gmPart `json:"parts,omitempty"`
}

type gmTool struct {
	FunctionDeclarations []gmFunction `json:"functionDeclarations"`
}

type gmFunction struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description,omitempty"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

type gmGenConfig struct {
	MaxOutputTokens    int             `json:"maxOutputTokens,omitempty"`
	Temperature        *float64        `json:"temperature,omitempty"`
	StopSequences      []string        `json:"stopSequences,omitempty"`
	ResponseMimeType   string          `json:"responseMimeType,omitempty"`
	ResponseJSONSchema json.RawMessage `json:"responseJsonSchema,omitempty"`
	ThinkingConfig     *gmThinking     `json:"thinkingConfig,omitempty"`
}

type gmThinking struct {
	ThinkingBudget  *int   `json:"thinkingBudget,omitempty"`
	ThinkingLevel   string `json:"thinkingLevel,omitempty"`
	IncludeThoughts bool   `json:"includeThoughts,omitempty"`
}

// Thinking budgets (tokens) for an Effort on Gemini 2.5 models.
var effortBudget = map[llm.Effort]int{llm.EffortMinimal: 512, llm.EffortLow: 1024, llm.EffortMedium: 8192, llm.EffortHigh: 24576}

// Thinking levels for an Effort on Gemini 3 and later models.
var effortLevel = map[llm.Effort]string{llm.EffortMinimal: "low", llm.EffortLow: "low", llm.EffortMedium: "medium", llm.EffortHigh: "high"}

// toGemini builds the request body.
func (g *geminiModel) toGemini(req *llm.Request) gmRequest {
	out := gmRequest{Contents: contents(req.Messages, g.gen)}
	system := req.System
	for _, d := range req.Tools {
		if len(out.Tools) == 0 {
			out.Tools = []gmTool{{}}
		}
		out.Tools[0].FunctionDeclarations = append(out.Tools[0].FunctionDeclarations,
			gmFunction{Name: d.Name, Description: d.Description, ParametersJSONSchema: wire.ToolSchema(d.Schema)})
	}
	cfg := gmGenConfig{MaxOutputTokens: req.MaxTokens, Temperature: req.Temperature, StopSequences: req.StopSequences}
	if cfg.MaxOutputTokens <= 0 {
		cfg.MaxOutputTokens = g.maxTok
	}
	if o := req.Output; o != nil && len(bytes.TrimSpace(o.Schema)) > 0 {
		if len(req.Tools) == 0 || g.gen.toolsWithJSON() {
			cfg.ResponseMimeType, cfg.ResponseJSONSchema = "application/json", o.Schema
		} else {
			// JSON mode and function calling cannot be combined before
			// Gemini 3: ask for the shape in words.
			var b strings.Builder
			if system != "" {
				b.WriteString(system + "\n\n")
			}
			b.WriteString("When you give your final answer, answer with one JSON value, and nothing else, valid against this JSON Schema")
			if o.Description != "" {
				b.WriteString(" (" + o.Description + ")")
			}
			b.WriteString(":\n")
			var compact bytes.Buffer
			if json.Compact(&compact, o.Schema) == nil {
				b.Write(compact.Bytes())
			} else {
				b.Write(o.Schema)
			}
			system = b.String()
		}
	}
	if r := req.Reasoning; r != nil && g.gen.reasons() {
		cfg.ThinkingConfig = g.thinking(*r)
	}
	if system != "" {
		out.SystemInstruction = &gmContent{Parts: []json.RawMessage{textPart(system)}}
	}
	if cfg.MaxOutputTokens > 0 || cfg.Temperature != nil || len(cfg.StopSequences) > 0 || cfg.ResponseMimeType != "" || cfg.ThinkingConfig != nil {
		out.GenerationConfig = &cfg
	}
	return out
}

// thinking maps a Reasoning onto the model's thinkingConfig (thinkingLevel
// and thinkingBudget together are refused).
func (g *geminiModel) thinking(r llm.Reasoning) *gmThinking {
	t := &gmThinking{IncludeThoughts: true}
	effort := llm.Effort(strings.ToLower(string(r.Effort)))
	if effort != "" {
		if _, ok := effortBudget[effort]; !ok {
			effort = llm.EffortMedium
		}
	}
	switch {
	case g.gen.thinkingLevels() && effort != "":
		t.ThinkingLevel = effortLevel[effort]
	case r.BudgetTokens > 0:
		t.ThinkingBudget = &r.BudgetTokens
	case effort != "":
		b := effortBudget[effort]
		t.ThinkingBudget = &b
	case !g.gen.thinkingLevels():
		dynamic := -1
		t.ThinkingBudget = &dynamic
	}
	return t
}

func marshalPart(p gmPart) json.RawMessage {
	b, _ := json.Marshal(p) // a gmPart of plain fields always encodes
	return b
}

func textPart(s string) json.RawMessage { return marshalPart(gmPart{Text: s}) }

// mediaPart is a media Part as inlineData (its media type sniffed when it
// has none) or fileData (a URL Gemini fetches: https:, http: or gs:); ok is
// false for a part with neither bytes nor such a URL.
func mediaPart(p llm.Part) (gmPart, bool) {
	mt := strings.ToLower(strings.TrimSpace(p.MediaType))
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = strings.TrimSpace(mt[:i])
	}
	switch {
	case len(p.Data) > 0:
		if mt == "" {
			mt, _, _ = strings.Cut(http.DetectContentType(p.Data), ";")
		}
		return gmPart{InlineData: &gmBlob{MimeType: mt, Data: p.Data}}, true
	case fetchable(p.URL):
		return gmPart{FileData: &gmFile{MimeType: mt, FileURI: p.URL}}, true
	}
	return gmPart{}, false
}

// fetchable reports whether Gemini can fetch a URL: a Files API or web URL,
// or a registered Cloud Storage object.
func fetchable(u string) bool {
	scheme, _, ok := strings.Cut(u, ":")
	switch strings.ToLower(scheme) {
	case "https", "http", "gs":
		return ok
	}
	return false
}

// userParts are a message's text and parts.
func userParts(text string, parts []llm.Part) []json.RawMessage {
	var out []json.RawMessage
	if text != "" {
		out = append(out, textPart(text))
	}
	for _, p := range parts {
		if p.Kind == llm.PartText {
			if p.Text != "" {
				out = append(out, textPart(p.Text))
			}
			continue
		}
		if m, ok := mediaPart(p); ok {
			out = append(out, marshalPart(m))
		} else if d := p.Describe(); d != "" {
			out = append(out, textPart(d))
		}
	}
	return out
}

// contents converts the conversation, merging consecutive contents of one
// role.
func contents(msgs []llm.Message, gen generation) []gmContent {
	out := make([]gmContent, 0, len(msgs))
	add := func(role string, parts []json.RawMessage) {
		if len(parts) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Parts = append(out[n-1].Parts, parts...)
			return
		}
		out = append(out, gmContent{Role: role, Parts: parts})
	}
	var calls []llm.ToolCall // the last assistant message's, which tool results answer
	for _, m := range msgs {
		switch m.Role {
		case llm.RoleAssistant:
			calls = m.ToolCalls
			add("model", modelParts(m))
		case llm.RoleTool:
			add("user", responseParts(m.ToolResults, calls, gen))
		default:
			add("user", userParts(m.Text, m.Parts))
		}
	}
	return out
}

// modelParts are an assistant message's parts: those of the answer as
// received when the message still says what they say, else rebuilt from
// its text and calls, each call keeping the signature of the stored call
// at its position if that has its name (Gemini 3 refuses a turn's calls
// without their signatures).
func modelParts(m llm.Message) []json.RawMessage {
	var sigs []gmPart // the stored function call parts, in order
	if raw := storedParts(m.Provider); raw != nil {
		got := decodeParts(raw, callSeed{})
		if got.Text == m.Text && sameCalls(got.ToolCalls, m.ToolCalls) {
			return raw
		}
		for _, r := range raw {
			var p gmPart
			if json.Unmarshal(r, &p) == nil && p.FunctionCall != nil {
				sigs = append(sigs, p)
			}
		}
	}
	var out []json.RawMessage
	if m.Text != "" {
		out = append(out, textPart(m.Text))
	}
	for i, c := range m.ToolCalls {
		id := c.ID
		if synthesized(id) {
			id = ""
		}
		p := gmPart{FunctionCall: &gmCall{ID: id, Name: c.Name, Args: wire.ObjectOrEmpty(c.Args)}}
		if i < len(sigs) && sigs[i].FunctionCall.Name == c.Name {
			p.ThoughtSignature = sigs[i].ThoughtSignature
		}
		out = append(out, marshalPart(p))
	}
	return out
}

// sameCalls reports whether two lists of calls have the same names and
// arguments in the same order (ids aside: decoded without a seed, stored
// parts give synthesized calls other ids).
func sameCalls(a, b []llm.ToolCall) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || !bytes.Equal(wire.ObjectOrEmpty(a[i].Args), wire.ObjectOrEmpty(b[i].Args)) {
			return false
		}
		if !synthesized(b[i].ID) && a[i].ID != b[i].ID {
			return false
		}
	}
	return true
}

// responseParts are a tool message's functionResponse parts, in the order
// of the calls they answer (results of unknown calls last), then, for
// models that take no media in a functionResponse, the results' media.
func responseParts(results []llm.ToolResult, calls []llm.ToolCall, gen generation) []json.RawMessage {
	order := make(map[string]int, len(calls))
	for i, c := range calls {
		if _, dup := order[c.ID]; !dup {
			order[c.ID] = i
		}
	}
	sorted := make([]llm.ToolResult, 0, len(results))
	for range calls {
		sorted = append(sorted, llm.ToolResult{})
	}
	placed := make([]bool, len(calls))
	var rest []llm.ToolResult
	for _, r := range results {
		if i, ok := order[r.CallID]; ok && !placed[i] {
			if r.Name == "" {
				r.Name = calls[i].Name
			}
			sorted[i], placed[i] = r, true
			continue
		}
		rest = append(rest, r)
	}
	var ordered []llm.ToolResult
	for i, r := range sorted {
		if placed[i] {
			ordered = append(ordered, r)
		}
	}
	ordered = append(ordered, rest...)

	var out, media []json.RawMessage
	for _, r := range ordered {
		key := "output"
		if r.IsError {
			key = "error"
		}
		resp, _ := json.Marshal(map[string]string{key: r.Content})
		fr := &gmFuncResponse{Name: r.Name, Response: resp}
		if !synthesized(r.CallID) {
			fr.ID = r.CallID
		}
		var extra []json.RawMessage
		for _, p := range r.Parts {
			if p.Kind == llm.PartText {
				if p.Text != "" {
					extra = append(extra, textPart(p.Text))
				}
				continue
			}
			m, ok := mediaPart(p)
			switch {
			case !ok:
				extra = append(extra, textPart(p.Describe()))
			case gen.mediaInResponses():
				fr.Parts = append(fr.Parts, m)
			default:
				extra = append(extra, marshalPart(m))
			}
		}
		out = append(out, marshalPart(gmPart{FunctionResponse: fr}))
		if len(extra) > 0 {
			media = append(media, textPart("The result of "+r.Name+" (call "+r.CallID+") includes:"))
			media = append(media, extra...)
		}
	}
	return append(out, media...)
}
