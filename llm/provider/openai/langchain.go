package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/rs/zerolog"
	"github.com/tmc/langchaingo/llms"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/wire"
)

// langChainConfig configures an adapter over a langchaingo model. The zero
// value of every field but Model means its default.
type langChainConfig struct {
	// Model is the langchaingo model to call (required).
	Model llms.Model
	// Name is what the adapter's Name reports and the Name of its failures,
	// e.g. "openai/gpt-4o-mini" (default "langchaingo").
	Name string
	// Secrets (API keys) are removed from the text of every error.
	Secrets []string
	// Policy runs every Generate through Policy.Execute (retries and a
	// circuit breaker keyed by Name; nil: failure.Default, asked at each
	// use). Under an agent.Agent, which runs each model turn through its
	// own policy too, a failure this policy already retried is not retried
	// again.
	Policy failure.Policy
	// Logger receives debug lines about each call (default: none).
	Logger *zerolog.Logger
}

// langChain adapts any langchaingo llms.Model to Model, using
// GenerateContent with native tool calls (not langchaingo's agents
// package, which flattens arguments and sends tools to few providers).
//
// The request becomes a system message, one message per conversation
// entry, and one tool message per tool result (the shape langchaingo's
// providers expect); tool schemas go as llms.Tool function definitions;
// Usage is read from the provider's GenerationInfo (never from
// llms.CountTokens, which downloads a tokenizer). Errors are classified into
// the failure taxonomy with Source failure.SourceModel and Name the
// adapter's name, with the configured secrets removed.
//
// Streaming: OnText is served by llms.WithStreamingFunc. Some langchaingo
// providers pass tool-call JSON through that function too; the adapters
// built by newOpenAI observe the wire instead (see newOpenAI) and deliver
// only text.
type langChain struct {
	model  llms.Model
	name   string
	cls    wire.Classifier
	policy failure.Policy
	log    zerolog.Logger
	// tapped means the model's HTTP client is a tapDoer, so each call can
	// observe its exchange through a *tap in the context.
	tapped bool
	// patch, if set (with tapped), builds what the tap rewrites in each
	// request's body (chat_body.go).
	patch func(*llm.Request) (*bodyPatch, error)
}

// newLangChain returns an adapter over cfg.Model.
func newLangChain(cfg langChainConfig) (*langChain, error) {
	if cfg.Model == nil {
		return nil, failure.New(failure.Config, failure.SourceModel, "provider.NewLangChain: Model is required")
	}
	if cfg.Name == "" {
		cfg.Name = "langchaingo"
	}
	a := &langChain{model: cfg.Model, name: cfg.Name, policy: cfg.Policy, log: zerolog.Nop(),
		cls: wire.Classifier{Name: cfg.Name, Scrub: wire.NewScrubber(cfg.Secrets...), Library: langChainKind}}
	if cfg.Logger != nil {
		a.log = *cfg.Logger
	}
	return a, nil
}

// Name returns the configured name.
func (a *langChain) Name() string { return a.name }

// Generate runs one model turn.
func (a *langChain) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return wire.GenerateUnder(ctx, a.policy, a.name, req, a.generate)
}

func (a *langChain) generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, a.cls.Err(ctx, err)
	}
	var msgs []llms.MessageContent
	if a.tapped && a.patch != nil {
		// The tap replaces the messages (chat_body.go): langchaingo is
		// given one placeholder, not a conversation to convert and encode
		// for nothing.
		msgs = []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, "")}
	} else {
		msgs = toLangChain(req)
	}
	var opts []llms.CallOption
	if len(req.Tools) > 0 {
		opts = append(opts, llms.WithTools(toolsToLangChain(req.Tools)))
	}
	if req.MaxTokens > 0 {
		opts = append(opts, llms.WithMaxTokens(req.MaxTokens))
	}
	if len(req.StopSequences) > 0 {
		opts = append(opts, llms.WithStopWords(req.StopSequences))
	}
	if req.Temperature != nil {
		opts = append(opts, llms.WithTemperature(*req.Temperature))
	}
	var t *tap
	if a.tapped {
		t = &tap{}
		ctx = withTap(ctx, t)
		if a.patch != nil {
			p, err := a.patch(req)
			if err != nil {
				return nil, badOutput(a.name, err)
			}
			t.patch = p
		}
		if req.Output != nil && req.OnText == nil {
			t.answer = &bytes.Buffer{}
		}
	}
	streamed := false
	if req.OnText != nil {
		if t != nil {
			t.stream = newOpenAIStream(req.OnText)
			// The stream is read on the wire; the function only makes the
			// provider stream.
			opts = append(opts, llms.WithStreamingFunc(func(context.Context, []byte) error { return nil }))
		} else {
			opts = append(opts, llms.WithStreamingFunc(func(_ context.Context, chunk []byte) error {
				if len(chunk) > 0 {
					streamed = true
					req.OnText(string(chunk))
				}
				return nil
			}))
		}
	}
	res, err := a.model.GenerateContent(ctx, msgs, opts...)
	if t != nil && t.stream != nil {
		t.stream.finish()
	}
	if t != nil {
		if ferr := t.failure(ctx, a.cls); ferr != nil {
			a.log.Debug().Err(ferr).Str("model", a.name).Msg("model call failed")
			return nil, ferr
		}
	}
	if err == nil && ctx.Err() != nil {
		// langchaingo's OpenAI stream reader stops quietly when the context
		// ends and returns what it had as if the turn were complete.
		err = ctx.Err()
	}
	if err != nil {
		fe := a.cls.Err(ctx, err)
		a.log.Debug().Err(fe).Str("model", a.name).Msg("model call failed")
		return nil, fe
	}
	out, err := fromLangChain(res)
	if err != nil {
		return nil, a.cls.Err(ctx, err)
	}
	if t != nil && t.stream != nil && t.stream.apply(out) {
		streamed = true
	}
	if t != nil && req.Output != nil {
		if r := t.refusal(); r != "" {
			return nil, refused(a.cls, r)
		}
	}
	if req.OnText != nil && !streamed && out.Message.Text != "" {
		req.OnText(out.Message.Text)
	}
	a.log.Debug().Str("model", a.name).Int("tool_calls", len(out.Message.ToolCalls)).
		Int("input_tokens", out.Usage.InputTokens).Int("output_tokens", out.Usage.OutputTokens).Msg("model turn")
	return out, nil
}

// toLangChain converts a request to langchaingo messages: tool results go
// one per tool message, since langchaingo's providers take exactly one
// ToolCallResponse per message.
func toLangChain(req *llm.Request) []llms.MessageContent {
	msgs := make([]llms.MessageContent, 0, len(req.Messages)+1)
	if req.System != "" {
		msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeSystem, req.System))
	}
	for _, m := range req.Messages {
		switch m.Role {
		case llm.RoleAssistant:
			var parts []llms.ContentPart
			if m.Text != "" || len(m.ToolCalls) == 0 {
				parts = append(parts, llms.TextContent{Text: m.Text})
			}
			for _, c := range m.ToolCalls {
				args := string(c.Args)
				if strings.TrimSpace(args) == "" {
					args = "{}"
				}
				parts = append(parts, llms.ToolCall{ID: c.ID, Type: "function",
					FunctionCall: &llms.FunctionCall{Name: c.Name, Arguments: args}})
			}
			msgs = append(msgs, llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: parts})
		case llm.RoleTool:
			for _, r := range m.ToolResults {
				msgs = append(msgs, llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{
					llms.ToolCallResponse{ToolCallID: r.CallID, Name: r.Name, Content: r.Content}}})
			}
		default:
			msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeHuman, m.Text))
		}
	}
	return msgs
}

func toolsToLangChain(defs []llm.ToolDef) []llms.Tool {
	tools := make([]llms.Tool, len(defs))
	for i, d := range defs {
		tools[i] = llms.Tool{Type: "function", Function: &llms.FunctionDefinition{
			Name: d.Name, Description: d.Description, Parameters: wire.ToolSchema(d.Schema)}}
	}
	return tools
}

// fromLangChain converts a langchaingo response. Providers differ in how
// they spread one assistant turn over choices (OpenAI: one choice with text
// and tool calls; langchaingo's Anthropic: one choice per content block), so
// the text of all choices is joined and all tool calls are kept; usage is
// taken once (Anthropic repeats it in every choice).
func fromLangChain(res *llms.ContentResponse) (*llm.Response, error) {
	if res == nil || len(res.Choices) == 0 {
		return nil, failure.New(failure.Model, failure.SourceModel, "the model provider returned no choices")
	}
	out := &llm.Response{Message: llm.Message{Role: llm.RoleAssistant}}
	var text, reasoning strings.Builder
	gotUsage := false
	for _, c := range res.Choices {
		if c == nil {
			continue
		}
		text.WriteString(c.Content)
		reasoning.WriteString(c.ReasoningContent)
		calls := c.ToolCalls
		if len(calls) == 0 && c.FuncCall != nil {
			calls = []llms.ToolCall{{FunctionCall: c.FuncCall}}
		}
		for _, tc := range calls {
			if tc.FunctionCall == nil {
				continue
			}
			out.Message.ToolCalls = append(out.Message.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.FunctionCall.Name,
				Args: wire.NormalizeArgs(tc.FunctionCall.Arguments)})
		}
		if out.StopReason == "" {
			out.StopReason = c.StopReason
		}
		if !gotUsage {
			out.Usage, gotUsage = usageOf(c.GenerationInfo)
		}
	}
	out.Message.Text = text.String()
	out.Message.Reasoning = reasoning.String()
	return out, nil
}

// usageOf reads the provider-reported usage from GenerationInfo, under the
// keys langchaingo's providers use.
func usageOf(info map[string]any) (llm.Usage, bool) {
	keys := [...][2]string{
		{"PromptTokens", "CompletionTokens"}, // openai, mistral
		{"InputTokens", "OutputTokens"},      // anthropic, bedrock
		{"input_tokens", "output_tokens"},    // googleai
		{"prompt_tokens", "completion_tokens"},
	}
	for _, k := range keys {
		in, ok1 := intOf(info[k[0]])
		out, ok2 := intOf(info[k[1]])
		if ok1 || ok2 {
			u := llm.Usage{InputTokens: in, OutputTokens: out}
			// langchaingo's openai provider (chat completions'
			// prompt_tokens_details and completion_tokens_details).
			u.CacheReadTokens, _ = intOf(info["PromptCachedTokens"])
			u.ReasoningTokens, _ = intOf(info["ReasoningTokens"])
			return u, true
		}
	}
	return llm.Usage{}, false
}

func intOf(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int32:
		return int(n), true
	case int64:
		return int(n), true
	case float64:
		return int(n), true
	case json.Number:
		i, err := n.Int64()
		return int(i), err == nil
	}
	return 0, false
}

// langChainKind classifies langchaingo's own errors (*llms.Error) by their
// code: rate limits, an unavailable provider and timeouts are Transient,
// authentication PermissionDenied, anything else Model.
func langChainKind(err error) (failure.Kind, string, bool) {
	var le *llms.Error
	if !errors.As(err, &le) {
		return failure.Unknown, "", false
	}
	switch le.Code {
	case llms.ErrCodeRateLimit, llms.ErrCodeProviderUnavailable, llms.ErrCodeTimeout:
		return failure.Transient, le.Message, true
	case llms.ErrCodeAuthentication:
		return failure.PermissionDenied, le.Message, true
	}
	return failure.Model, le.Message, true
}
