package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/wire"
)

// Defaults of the Anthropic provider.
const (
	// defaultAnthropicModel is the model used when none is configured.
	defaultAnthropicModel = "claude-sonnet-4-5"
	// defaultAnthropicBaseURL is the Anthropic API's base URL.
	defaultAnthropicBaseURL = "https://api.anthropic.com"
	// anthropicVersion is the anthropic-version header sent with every
	// request.
	anthropicVersion = "2023-06-01"
	// defaultMaxTokens is the answer cap when neither the request nor the
	// Config sets one (the Messages API requires max_tokens).
	defaultMaxTokens = 4096
)

// anthropicModel is a Model that speaks anthropicModel's Messages API
// (POST /v1/messages, JSON or server-sent events) with net/http.
//
// It does not go through langchaingo's anthropic provider because that
// provider (v0.1.14) converts an assistant message by looking at its first
// part only (handleAIMessage reads msg.Parts[0]), and a tool message the
// same way (handleToolMessage): an assistant turn with text and a tool call,
// or with parallel tool calls, loses every part after the first when the
// conversation is sent back, and the API then rejects the tool results
// that answer the dropped tool_use blocks. The conversion happens in an
// unexported function on the way to an internal client, so it cannot be
// fixed by splitting messages on our side either: two consecutive assistant
// messages would survive, but the parallel tool results must go back as
// several tool_result blocks in one user message, which that provider
// cannot produce. Speaking the API directly is about as much code as the
// workaround and keeps every block: an assistant turn becomes one message
// with its text block and all its tool_use blocks, and the results of one
// turn become one user message with a tool_result block each (is_error
// kept). Consecutive messages of the same role are merged, as the API
// requires alternating turns.
type anthropicModel struct {
	name      string
	model     string
	endpoint  string // the base URL, for Capabilities.Endpoint
	family    generation
	url       string
	key       string
	maxTokens int
	hc        *http.Client
	cls       wire.Classifier
	policy    failure.Policy
	log       zerolog.Logger
}

// newAnthropic returns a model for Anthropic's Messages API. cfg.APIKey is
// required.
func newAnthropic(cfg provider.Config) (*anthropicModel, error) {
	if cfg.APIKey == "" {
		return nil, failure.New(failure.Config, failure.SourceModel, "the Anthropic provider needs an API key (set ANTHROPIC_API_KEY)")
	}
	if cfg.Model == "" {
		cfg.Model = defaultAnthropicModel
	}
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = defaultAnthropicBaseURL
	}
	base = strings.TrimSuffix(base, "/v1")
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = defaultMaxTokens
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	name := "anthropic/" + cfg.Model
	a := &anthropicModel{name: name, model: cfg.Model, endpoint: base, family: generationOf(cfg.Model), url: base + "/v1/messages", key: cfg.APIKey, maxTokens: cfg.MaxTokens,
		hc: hc, cls: wire.Classifier{Name: name, Scrub: wire.NewScrubber(cfg.APIKey)}, policy: cfg.Policy, log: zerolog.Nop()}
	if cfg.Logger != nil {
		a.log = *cfg.Logger
	}
	return a, nil
}

// Name returns "anthropic/<model>".
func (a *anthropicModel) Name() string { return a.name }

// Generate runs one model turn; with req.OnText set, the answer streams.
func (a *anthropicModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return wire.GenerateUnder(ctx, a.policy, a.name, req, a.generate)
}

// anthropicRequest is the body of POST /v1/messages. The fields the API
// caches as the prompt prefix come last, in the order it caches them
// (tools, system, messages), so that the request's bytes from "tools" on
// are the prefix itself: what must stay byte-identical from one turn to
// the next for the cache to hit (see cache.go).
type anthropicRequest struct {
	Model        string          `json:"model"`
	MaxTokens    int             `json:"max_tokens"`
	Temperature  *float64        `json:"temperature,omitempty"`
	Stop         []string        `json:"stop_sequences,omitempty"`
	Stream       bool            `json:"stream,omitempty"`
	Thinking     *thinkingConfig `json:"thinking,omitempty"`
	OutputConfig *outputConfig   `json:"output_config,omitempty"`
	ToolChoice   *toolChoice     `json:"tool_choice,omitempty"`

	Tools    []anthropicTool    `json:"tools,omitempty"`
	System   []anthropicBlock   `json:"system,omitempty"`
	Messages []anthropicMessage `json:"messages"`

	// betas are the anthropic-beta header's features (not sent in the body).
	betas []string
}

type anthropicMessage struct {
	Role    string           `json:"role"`
	Content []anthropicBlock `json:"content"`
}

// anthropicBlock is a content block of either direction: text, image,
// document, tool_use, tool_result, and (kept raw) thinking and server tool
// blocks.
type anthropicBlock struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
	// Source is an image's or a document's content (parts.go).
	Source *mediaSource `json:"source,omitempty"`
	// Title is a document's name.
	Title     string          `json:"title,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	// Content is a tool_result's text (a JSON string) or blocks (an array,
	// when the result has parts), or a server tool result's content (an
	// object).
	Content json.RawMessage `json:"content,omitempty"`
	IsError bool            `json:"is_error,omitempty"`
	// Thinking and Signature are a thinking block's, as answers carry them
	// (requests send the block back raw); Data is a redacted_thinking's.
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	Data      string `json:"data,omitempty"`
	// CacheControl marks a cache breakpoint after this block (cache.go).
	CacheControl *cacheControl `json:"cache_control,omitempty"`
	// raw, when set, is the block as the provider sent it, sent back as
	// it is (a server tool's or a thinking block: see anthropic_search.go
	// and thinking.go).
	raw json.RawMessage
}

// MarshalJSON sends a block the provider sent back as it came.
func (b anthropicBlock) MarshalJSON() ([]byte, error) {
	if b.raw != nil {
		return b.raw, nil
	}
	type plain anthropicBlock
	return json.Marshal(plain(b))
}

// anthropicTool is a tool definition: ours (Name, Description,
// InputSchema, DeferLoading) or a server tool's (Type and Name).
type anthropicTool struct {
	Type         string          `json:"type,omitempty"`
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema,omitempty"`
	DeferLoading bool            `json:"defer_loading,omitempty"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

// anthropicUsage is an answer's usage. input_tokens counts only the input
// after the last cache breakpoint; the cache's reads and writes are
// counted apart.
type anthropicUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokensDetails      *struct {
		ThinkingTokens int `json:"thinking_tokens"`
	} `json:"output_tokens_details,omitempty"`
}

// usage converts to llm.Usage, whose InputTokens counts every input token
// (cached, written to the cache or neither).
func (u anthropicUsage) usage() llm.Usage {
	out := llm.Usage{InputTokens: u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens, OutputTokens: u.OutputTokens,
		CacheReadTokens: u.CacheReadInputTokens, CacheWriteTokens: u.CacheCreationInputTokens}
	if d := u.OutputTokensDetails; d != nil {
		out.ReasoningTokens = d.ThinkingTokens
	}
	return out
}

type anthropicResponse struct {
	ID         string            `json:"id"`
	Model      string            `json:"model"`
	Type       string            `json:"type"`
	Content    []json.RawMessage `json:"content"`
	StopReason string            `json:"stop_reason"`
	Usage      anthropicUsage    `json:"usage"`
}

// toAnthropic builds the request body: the conversation, the cache
// breakpoints on its stable prefix (unless req.NoCache), the answer's
// shape and the reasoning asked for.
func (a *anthropicModel) toAnthropic(req *llm.Request) anthropicRequest {
	out := anthropicRequest{Model: a.model, MaxTokens: req.MaxTokens,
		Temperature: req.Temperature, Stop: req.StopSequences, Stream: req.OnText != nil}
	if out.MaxTokens <= 0 {
		out.MaxTokens = a.maxTokens
	}
	if req.System != "" {
		out.System = []anthropicBlock{{Type: "text", Text: req.System}}
	}
	out.Tools = anthropicTools(req)
	out.Messages = anthropicMessages(req.Messages)
	if !req.NoCache {
		markCache(&out)
	}
	// After the breakpoints: a tool the answer is forced through comes after
	// the cached tool definitions.
	shapeOutput(&out, a.family, req)
	think(&out, a.family, req.Reasoning)
	if wire.UsesToolSearch(req.Tools) {
		out.betas = append(out.betas, toolSearchBeta)
	}
	return out
}

// anthropicMessages converts the conversation, keeping every block of
// every message and merging consecutive messages of the same role.
func anthropicMessages(msgs []llm.Message) []anthropicMessage {
	out := make([]anthropicMessage, 0, len(msgs))
	add := func(role string, blocks []anthropicBlock) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			return
		}
		out = append(out, anthropicMessage{Role: role, Content: blocks})
	}
	for _, m := range msgs {
		var blocks []anthropicBlock
		switch m.Role {
		case llm.RoleAssistant:
			// Thinking blocks first, as the API requires them back: before
			// the text and the tool calls they led to.
			thinking, server := splitThinking(providerBlocks(m.Provider))
			blocks = append(blocks, thinking...)
			if m.Text != "" {
				blocks = append(blocks, anthropicBlock{Type: "text", Text: m.Text})
			}
			blocks = append(blocks, server...)
			for _, c := range m.ToolCalls {
				blocks = append(blocks, anthropicBlock{Type: "tool_use", ID: c.ID, Name: c.Name, Input: wire.ObjectOrEmpty(c.Args)})
			}
			add("assistant", blocks)
		case llm.RoleTool:
			for _, r := range m.ToolResults {
				blocks = append(blocks, anthropicBlock{Type: "tool_result", ToolUseID: r.CallID, Content: toolResultContent(r), IsError: r.IsError})
			}
			add("user", blocks)
		default:
			if m.Text != "" {
				blocks = append(blocks, anthropicBlock{Type: "text", Text: m.Text})
			}
			blocks = append(blocks, partBlocks(m.Parts)...)
			add("user", blocks)
		}
	}
	return out
}

func (a *anthropicModel) generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, a.cls.Err(ctx, err)
	}
	areq := a.toAnthropic(req)
	hreq, err := a.cls.PostJSON(ctx, a.url, areq, "Anthropic")
	if err != nil {
		return nil, err
	}
	hreq.Header.Set("x-api-key", a.key)
	hreq.Header.Set("anthropic-version", anthropicVersion)
	if req.OnText != nil {
		hreq.Header.Set("accept", "text/event-stream")
	}
	if len(areq.betas) > 0 {
		hreq.Header.Set("anthropic-beta", strings.Join(areq.betas, ","))
	}
	answer := forcedTool(a.family, req)
	resp, err := a.do(ctx, hreq)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out *llm.Response
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("content-type")); mt == "text/event-stream" {
		out, err = a.readStream(ctx, io.LimitReader(resp.Body, wire.MaxResponseBody), req.OnText, answer)
	} else {
		out, err = a.readJSON(ctx, io.LimitReader(resp.Body, wire.MaxResponseBody), answer)
		if err == nil && req.OnText != nil && out.Message.Text != "" {
			req.OnText(out.Message.Text)
		}
	}
	if err != nil {
		return nil, err
	}
	a.log.Debug().Str("model", a.name).Int("tool_calls", len(out.Message.ToolCalls)).
		Int("input_tokens", out.Usage.InputTokens).Int("output_tokens", out.Usage.OutputTokens).
		Int("cache_read_tokens", out.Usage.CacheReadTokens).Int("cache_write_tokens", out.Usage.CacheWriteTokens).Msg("model turn")
	return out, nil
}

func (a *anthropicModel) readJSON(ctx context.Context, r io.Reader, answer string) (*llm.Response, error) {
	var res anthropicResponse
	if err := json.NewDecoder(r).Decode(&res); err != nil {
		if ctx.Err() != nil || !wire.IsSyntaxError(err) {
			return nil, a.cls.Err(ctx, err)
		}
		return nil, &failure.Error{Kind: failure.Protocol, Source: failure.SourceModel, Name: a.name, Op: "generate",
			Message: "the model provider's answer is not valid JSON", Err: err}
	}
	blocks := make([]anthropicBlock, 0, len(res.Content))
	var native []json.RawMessage
	for _, raw := range res.Content {
		var b anthropicBlock
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, &failure.Error{Kind: failure.Protocol, Source: failure.SourceModel, Name: a.name, Op: "generate",
				Message: "a content block of the model provider's answer is not valid", Err: err}
		}
		if isProviderBlock(b.Type) {
			native = append(native, raw)
		}
		blocks = append(blocks, b)
	}
	out := responseFromBlocks(blocks, res.StopReason, res.Usage.usage(), answer)
	out.Message.Provider = wire.JoinBlocks(native)
	out.ID, out.Model = res.ID, res.Model
	return out, nil
}

// responseFromBlocks builds a Response from the content blocks of an
// answer: text blocks are joined, tool_use blocks become tool calls in
// order, except a call of the tool the answer is forced through (answer,
// "" for none), whose input is the answer's text; thinking blocks' text is
// the Reasoning; other blocks are skipped (the raw ones are kept by the
// caller in Provider).
func responseFromBlocks(blocks []anthropicBlock, stop string, u llm.Usage, answer string) *llm.Response {
	out := &llm.Response{Message: llm.Message{Role: llm.RoleAssistant}, StopReason: stop, Usage: u}
	var text, reasoning strings.Builder
	for _, b := range blocks {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "thinking":
			reasoning.WriteString(b.Thinking)
		case "tool_use":
			args := b.Input
			if len(bytes.TrimSpace(args)) == 0 {
				args = json.RawMessage("{}")
			}
			if answer != "" && b.Name == answer {
				text.Write(args)
				continue
			}
			out.Message.ToolCalls = append(out.Message.ToolCalls, llm.ToolCall{ID: b.ID, Name: b.Name, Args: args})
		}
	}
	out.Message.Text = text.String()
	out.Message.Reasoning = reasoning.String()
	return out
}
