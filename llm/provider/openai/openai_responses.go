package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/wire"
)

// OpenAI's tool search exists only in its Responses API (POST /responses,
// gpt-5.4 and later), which langchaingo does not speak: a turn that defers
// tools (llm.ToolDef.Deferred, set by the agent's
// ContextConfig.ProviderSearch) goes there, with every tool sent, the
// deferred ones marked defer_loading, and the hosted tool_search tool; the
// answer's tool_search_call and tool_search_output items are kept in
// llm.Message.Provider and go back as input items, so the tools found stay
// loaded. Other turns use chat completions as before. Requests are
// stateless (store: false): the whole conversation goes each time.

// responsesAPI is what the OpenAI model needs to call the Responses API.
type responsesAPI struct {
	url, key, model string
	hc              *http.Client
	cls             wire.Classifier
}

type responsesRequest struct {
	Model        string            `json:"model"`
	Instructions string            `json:"instructions,omitempty"`
	Input        []json.RawMessage `json:"input"`
	Tools        []responsesTool   `json:"tools,omitempty"`
	MaxOutput    int               `json:"max_output_tokens,omitempty"`
	Temperature  *float64          `json:"temperature,omitempty"`
	Store        bool              `json:"store"`
	Stream       bool              `json:"stream,omitempty"`
	// Text carries the answer schema (text.format).
	Text *struct {
		Format jsonSchemaFormat `json:"format"`
	} `json:"text,omitempty"`
	PromptCacheKey string `json:"prompt_cache_key,omitempty"`
	Reasoning      *struct {
		Effort string `json:"effort"`
	} `json:"reasoning,omitempty"`
}

type responsesTool struct {
	Type         string          `json:"type"`
	Name         string          `json:"name,omitempty"`
	Description  string          `json:"description,omitempty"`
	Parameters   json.RawMessage `json:"parameters,omitempty"`
	Strict       *bool           `json:"strict,omitempty"`
	DeferLoading bool            `json:"defer_loading,omitempty"`
}

// responsesItem is an output item (message, function_call, and the
// provider's own, kept raw).
type responsesItem struct {
	Type   string `json:"type"`
	Role   string `json:"role,omitempty"`
	CallID string `json:"call_id,omitempty"`
	Name   string `json:"name,omitempty"`
	// Arguments is a function call's JSON text as a string (a tool search
	// call's is an object).
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Content   []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content,omitempty"`
}

type responsesResponse struct {
	ID      string            `json:"id"`
	Model   string            `json:"model"`
	Status  string            `json:"status"`
	Output  []json.RawMessage `json:"output"`
	Usage   responsesUsage    `json:"usage"`
	Details *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Error *struct {
		Message string `json:"message"`
		Code    string `json:"code"`
	} `json:"error"`
}

// responsesUsage is a Responses API answer's usage: input_tokens counts
// every input token, cached ones included, and output_tokens every output
// token, reasoning included, as llm.Usage does.
type responsesUsage struct {
	InputTokens        int `json:"input_tokens"`
	OutputTokens       int `json:"output_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

func (u responsesUsage) usage() llm.Usage {
	return llm.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CacheReadTokens: u.InputTokensDetails.CachedTokens, ReasoningTokens: u.OutputTokensDetails.ReasoningTokens}
}

// isResponsesProviderItem reports whether an output item goes back as it
// came: the tool search's call and output.
func isResponsesProviderItem(typ string) bool {
	return typ == "tool_search_call" || typ == "tool_search_output"
}

// responsesBody builds the request of a turn.
func (r *responsesAPI) responsesBody(req *llm.Request) (responsesRequest, error) {
	out := responsesRequest{Model: r.model, Instructions: req.System, MaxOutput: req.MaxTokens,
		Temperature: req.Temperature, Stream: req.OnText != nil}
	if req.Output != nil {
		f, err := schemaFormat(req.Output)
		if err != nil {
			return out, err
		}
		f.Type = "json_schema"
		out.Text = &struct {
			Format jsonSchemaFormat `json:"format"`
		}{f}
	}
	if req.CacheKey != "" && !req.NoCache && openAIFamily(r.model) {
		out.PromptCacheKey = req.CacheKey
	}
	if e := reasoningEffort(r.model, req.Reasoning); e != "" {
		out.Reasoning = &struct {
			Effort string `json:"effort"`
		}{e}
	}
	notStrict := false
	for _, d := range req.Tools {
		out.Tools = append(out.Tools, responsesTool{Type: "function", Name: d.Name, Description: d.Description,
			Parameters: wire.ToolSchema(d.Schema), Strict: &notStrict, DeferLoading: d.Deferred})
	}
	if wire.UsesToolSearch(req.Tools) {
		out.Tools = append(out.Tools, responsesTool{Type: "tool_search"})
	}
	item := func(v any) {
		b, _ := json.Marshal(v)
		out.Input = append(out.Input, b)
	}
	for _, m := range req.Messages {
		switch m.Role {
		case llm.RoleAssistant:
			if m.Text != "" {
				item(map[string]string{"role": "assistant", "content": m.Text})
			}
			out.Input = append(out.Input, providerItems(m.Provider)...)
			for _, c := range m.ToolCalls {
				item(map[string]string{"type": "function_call", "call_id": c.ID, "name": c.Name, "arguments": string(wire.ObjectOrEmpty(c.Args))})
			}
		case llm.RoleTool:
			// As in chat completions, a result's media go in a user
			// message after the turn's results.
			var media []json.RawMessage
			for _, res := range m.ToolResults {
				text, parts := splitParts(res.Content, res.Parts)
				if len(parts) > 0 {
					text += fmt.Sprintf("\n(%d attachment(s) of this result follow in the next user message.)", len(parts))
					media = append(media, responsesPart(chatPart{Type: "text",
						Text: fmt.Sprintf("Attachments of the result of tool call %s (%s):", res.CallID, res.Name)}))
					for _, p := range parts {
						media = append(media, responsesPart(p))
					}
				}
				item(map[string]string{"type": "function_call_output", "call_id": res.CallID, "output": text})
			}
			if len(media) > 0 {
				item(map[string]any{"role": "user", "content": media})
			}
		default:
			if len(m.Parts) == 0 {
				if m.Text != "" {
					item(map[string]string{"role": "user", "content": m.Text})
				}
				continue
			}
			var content []json.RawMessage
			if m.Text != "" {
				content = append(content, responsesPart(chatPart{Type: "text", Text: m.Text}))
			}
			for _, p := range m.Parts {
				content = append(content, responsesPart(chatPartOf(p)))
			}
			item(map[string]any{"role": "user", "content": content})
		}
	}
	return out, nil
}

// responsesPart is a chat completions content part in the Responses API's
// form: input_text, input_image, input_file (audio, which that API does
// not take, is described in text).
func responsesPart(p chatPart) json.RawMessage {
	var v any
	switch {
	case p.ImageURL != nil:
		v = map[string]string{"type": "input_image", "image_url": p.ImageURL.URL}
	case p.File != nil:
		v = map[string]string{"type": "input_file", "filename": p.File.Filename, "file_data": p.File.FileData}
	case p.InputAudio != nil:
		v = map[string]string{"type": "input_text", "text": fmt.Sprintf("[audio %s, not sent: this API takes no audio]", p.InputAudio.Format)}
	default:
		v = map[string]string{"type": "input_text", "text": p.Text}
	}
	b, _ := json.Marshal(v)
	return b
}

// providerItems are a message's Provider items that are the Responses
// API's (an Anthropic message's blocks are not).
func providerItems(raw json.RawMessage) []json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var raws []json.RawMessage
	if json.Unmarshal(raw, &raws) != nil {
		return nil
	}
	out := raws[:0]
	for _, it := range raws {
		var t struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(it, &t) == nil && isResponsesProviderItem(t.Type) {
			out = append(out, it)
		}
	}
	return out
}

// generate runs one turn on the Responses API.
func (r *responsesAPI) generate(ctx context.Context, name string, req *llm.Request) (*llm.Response, error) {
	rb, err := r.responsesBody(req)
	if err != nil {
		return nil, badOutput(name, err)
	}
	body, err := json.Marshal(rb)
	if err != nil {
		return nil, &failure.Error{Kind: failure.Model, Source: failure.SourceModel, Name: name, Op: "generate",
			Message: "the request could not be encoded (a tool schema is not valid JSON?)", Err: err}
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(body))
	if err != nil {
		return nil, &failure.Error{Kind: failure.Config, Source: failure.SourceModel, Name: name, Op: "generate",
			Message: "the OpenAI base URL is invalid", Err: r.cls.Scrub.ScrubErr(err)}
	}
	hreq.Header.Set("content-type", "application/json")
	hreq.Header.Set("authorization", "Bearer "+r.key)
	resp, err := r.hc.Do(hreq)
	if err != nil {
		return nil, r.cls.Err(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, wire.MaxErrorBody))
		if fe := contextLength(r.cls, b); fe != nil {
			return nil, fe
		}
		msg, typ := wire.ParseErrorBody(b)
		return nil, r.cls.Status(wire.HTTPFailure{Status: resp.StatusCode, Message: msg, ErrType: typ})
	}
	in := io.LimitReader(resp.Body, wire.MaxResponseBody)
	var res *responsesResponse
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("content-type")); mt == "text/event-stream" {
		res, err = r.readStream(ctx, name, in, req.OnText)
	} else {
		res = &responsesResponse{}
		if derr := json.NewDecoder(in).Decode(res); derr != nil {
			if ctx.Err() != nil || !wire.IsSyntaxError(derr) {
				return nil, r.cls.Err(ctx, derr)
			}
			return nil, &failure.Error{Kind: failure.Protocol, Source: failure.SourceModel, Name: name, Op: "generate",
				Message: "the model provider's answer is not valid JSON", Err: derr}
		}
	}
	if err != nil {
		return nil, err
	}
	out, err := fromResponses(r.cls, res)
	if err == nil && req.OnText != nil && !strings.Contains(resp.Header.Get("content-type"), "event-stream") && out.Message.Text != "" {
		req.OnText(out.Message.Text)
	}
	return out, err
}

// fromResponses builds the Response of a Responses API answer.
func fromResponses(cls wire.Classifier, res *responsesResponse) (*llm.Response, error) {
	name := cls.Name
	if res.Error != nil && res.Error.Code == codeContextLength {
		return nil, contextLengthError(cls, res.Error.Message)
	}
	if res.Error != nil || res.Status == "failed" {
		msg := "the model provider reported a failed response"
		if res.Error != nil {
			msg += ": " + res.Error.Message
		}
		return nil, &failure.Error{Kind: failure.Model, Source: failure.SourceModel, Name: name, Op: "generate", Message: msg}
	}
	out := &llm.Response{Message: llm.Message{Role: llm.RoleAssistant}, StopReason: res.Status, Usage: res.Usage.usage(),
		ID: res.ID, Model: res.Model}
	if res.Details != nil && res.Details.Reason != "" {
		out.StopReason = res.Details.Reason
	}
	var text strings.Builder
	var native []json.RawMessage
	for _, raw := range res.Output {
		var it responsesItem
		if err := json.Unmarshal(raw, &it); err != nil {
			return nil, &failure.Error{Kind: failure.Protocol, Source: failure.SourceModel, Name: name, Op: "generate",
				Message: "an output item of the model provider's answer is not valid", Err: err}
		}
		switch {
		case it.Type == "message":
			for _, c := range it.Content {
				switch c.Type {
				case "output_text":
					text.WriteString(c.Text)
				case "refusal":
					return nil, refused(cls, c.Refusal)
				}
			}
		case it.Type == "function_call":
			var args string
			_ = json.Unmarshal(it.Arguments, &args) // not a string: no arguments, refused by the agent's schema check
			out.Message.ToolCalls = append(out.Message.ToolCalls, llm.ToolCall{ID: it.CallID, Name: it.Name, Args: wire.NormalizeArgs(args)})
		case isResponsesProviderItem(it.Type):
			native = append(native, raw)
		}
	}
	out.Message.Text = text.String()
	out.Message.Provider = wire.JoinBlocks(native)
	return out, nil
}

// readStream reads a Responses API event stream: text deltas go to
// onText, and the final response event carries the whole answer.
func (r *responsesAPI) readStream(ctx context.Context, name string, body io.Reader, onText func(string)) (*responsesResponse, error) {
	var final *responsesResponse
	var streamErr string
	var p wire.SSEParser
	p.Emit = func(ev wire.SSEEvent) {
		var e struct {
			Type     string             `json:"type"`
			Delta    string             `json:"delta"`
			Message  string             `json:"message"`
			Response *responsesResponse `json:"response"`
		}
		if json.Unmarshal([]byte(ev.Data), &e) != nil {
			return
		}
		switch e.Type {
		case "response.output_text.delta":
			if e.Delta != "" && onText != nil && final == nil {
				onText(e.Delta)
			}
		case "response.completed", "response.incomplete", "response.failed":
			final = e.Response
		case "error":
			streamErr = e.Message
			if streamErr == "" {
				streamErr = "error event"
			}
		}
	}
	buf := make([]byte, 32<<10)
	for final == nil && streamErr == "" {
		n, err := body.Read(buf)
		if n > 0 {
			p.Feed(buf[:n])
		}
		if errors.Is(err, io.EOF) {
			p.Close()
			break
		}
		if err != nil {
			return nil, r.cls.Err(ctx, err)
		}
	}
	switch {
	case streamErr != "":
		return nil, &failure.Error{Kind: failure.Transient, Source: failure.SourceModel, Name: name, Op: "generate", Retryable: true,
			Message: "the model provider failed while streaming: " + r.cls.Scrub.Scrub(streamErr)}
	case final == nil:
		return nil, &failure.Error{Kind: failure.Transient, Source: failure.SourceModel, Name: name, Op: "generate", Retryable: true,
			Message: "the model provider's stream ended before its final response event"}
	}
	return final, nil
}
