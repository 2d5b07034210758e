package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"

	"github.com/tmc/langchaingo/llms/openai"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/wire"
)

// Defaults of the OpenAI provider.
const (
	// defaultOpenAIModel is the model used when none is configured.
	defaultOpenAIModel = "gpt-4o-mini"
	// defaultOpenAIBaseURL is the OpenAI API's base URL.
	defaultOpenAIBaseURL = "https://api.openai.com/v1"
	// keylessPlaceholder is sent as the bearer token to an OpenAI-compatible
	// server configured without a key (Ollama, llama.cpp, vLLM ignore it).
	keylessPlaceholder = "no-key"
)

// newOpenAI returns a model that speaks the OpenAI chat completions API
// through langchaingo's openai provider. It also serves Ollama (BaseURL
// "http://localhost:11434/v1"; langchaingo's ollama provider has no tool
// calls) and other OpenAI-compatible servers; such a server may be given
// no APIKey.
//
// The adapter observes each HTTP exchange itself (through the provider's
// HTTP client option), which fixes three things langchaingo v0.1.14 gets
// wrong: it hands tool-call JSON to the streaming function as if it were
// text, it merges streamed tool-call deltas by position instead of by their
// "index" (so interleaved parallel calls, or a server's empty trailing
// delta, corrupt the calls), and it reduces HTTP failures to text without
// the status. Here OnText receives only text, streamed tool calls are
// assembled by index, and failures are classified from the real status.
func newOpenAI(cfg provider.Config) (*openAIModel, error) {
	key := cfg.APIKey
	if key == "" {
		if cfg.BaseURL == "" {
			return nil, failure.New(failure.Config, failure.SourceModel,
				"the OpenAI provider needs an API key (set OPENAI_API_KEY), or a BaseURL of an OpenAI-compatible server (set OPENAI_BASE_URL)")
		}
		key = keylessPlaceholder
	}
	model := cfg.Model
	if model == "" {
		model = defaultOpenAIModel
	}
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = defaultOpenAIBaseURL
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	m, err := openai.New(openai.WithToken(key), openai.WithModel(model), openai.WithBaseURL(base),
		openai.WithHTTPClient(tapDoer{next: hc}))
	if err != nil {
		return nil, &failure.Error{Kind: failure.Config, Source: failure.SourceModel, Name: "openai/" + model,
			Message: "the OpenAI provider could not be configured", Err: wire.NewScrubber(key).ScrubErr(err)}
	}
	var secrets []string
	if key != keylessPlaceholder {
		secrets = append(secrets, key)
	}
	a, err := newLangChain(langChainConfig{Model: m, Name: "openai/" + model, Secrets: secrets,
		Policy: cfg.Policy, Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	a.tapped = true
	a.patch = func(req *llm.Request) (*bodyPatch, error) { return chatPatch(model, req) }
	return &openAIModel{lc: a, model: model, endpoint: base, responses: &responsesAPI{url: base + "/responses", key: key, model: model, hc: hc, cls: a.cls}}, nil
}

// openAIModel is a Model that speaks the openAIModel chat completions API, built by
// newOpenAI.
type openAIModel struct {
	lc        *langChain
	model     string
	endpoint  string        // the base URL, for Capabilities.Endpoint
	responses *responsesAPI // turns that defer tools (openai_responses.go)
}

// Capabilities says what the model takes, by its name (models.go): every
// model can defer tools to OpenAI's own tool search (the Responses API's,
// for gpt-5.4 and later models; the agent's ContextConfig.ProviderSearch)
// and is given answer schemas as a json_schema response format
// (output.go); images, PDFs, audio, reasoning effort and the prompt cache
// go to the models that take them. ContextWindow is left 0: the agent
// knows OpenAI's windows by name. Endpoint is the base URL.
func (o *openAIModel) Capabilities() llm.Capabilities {
	c := capabilitiesOf(o.model)
	c.Endpoint = o.endpoint
	return c
}

// Name returns "openai/<model>".
func (o *openAIModel) Name() string { return o.lc.Name() }

// Generate runs one model turn; with req.OnText set, the answer streams.
func (o *openAIModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if wire.UsesToolSearch(req.Tools) {
		return wire.GenerateUnder(ctx, o.lc.policy, o.lc.name, req, func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
			if err := ctx.Err(); err != nil {
				return nil, o.lc.cls.Err(ctx, err)
			}
			return o.responses.generate(ctx, o.lc.name, req)
		})
	}
	return o.lc.Generate(ctx, req)
}

// openAIChunk is one chunk of an OpenAI chat completions stream.
type openAIChunk struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content *string `json:"content"`
			// ReasoningContent (DeepSeek, vLLM) or Reasoning (OpenRouter,
			// Ollama's /v1) is the model's reasoning text, where a
			// compatible server shows it.
			ReasoningContent *string `json:"reasoning_content"`
			// Refusal is a structured answer's refusal.
			Refusal   *string `json:"refusal"`
			Reasoning *string `json:"reasoning"`
			ToolCalls []struct {
				Index    *int   `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *chatUsage `json:"usage"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    any    `json:"code"`
	} `json:"error"`
}

// chatUsage is the usage of a chat completion: prompt_tokens counts every
// input token, cached ones included, and completion_tokens every output
// token, reasoning included, as llm.Usage does.
type chatUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func (u *chatUsage) usage() llm.Usage {
	out := llm.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
	if d := u.PromptTokensDetails; d != nil {
		out.CacheReadTokens = d.CachedTokens
	}
	if d := u.CompletionTokensDetails; d != nil {
		out.ReasoningTokens = d.ReasoningTokens
	}
	return out
}

// streamCall is a tool call being assembled from deltas.
type streamCall struct {
	id, name string
	args     strings.Builder
}

// openAIStream assembles an OpenAI chat completions SSE stream: text (sent
// to onText as it comes), tool calls by index, the finish reason, usage and
// an in-stream error. It is fed from the provider library's reading
// goroutine, so its state is guarded; after finish it no longer calls
// onText.
type openAIStream struct {
	mu      sync.Mutex
	onText  func(string)
	parser  wire.SSEParser
	text    strings.Builder
	reason  strings.Builder
	refusal strings.Builder
	calls   []*streamCall
	byIndex map[int]*streamCall
	stop    string
	id      string // the completion's id and model, from the chunks
	model   string
	usage   llm.Usage
	gotUse  bool
	seen    bool
	done    bool
	eof     bool // the body ended
	ended   bool // the stream said it was complete ([DONE] or a finish reason)
	errMsg  string
	errType string
	errCode string
}

func newOpenAIStream(onText func(string)) *openAIStream {
	s := &openAIStream{onText: onText, byIndex: map[int]*streamCall{}}
	s.parser.Emit = s.event
	return s
}

// feed parses bytes of the stream.
func (s *openAIStream) feed(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.parser.Feed(p)
}

// close ends the stream (end of body).
func (s *openAIStream) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.parser.Close()
	s.eof = true
}

// finish stops delivering text; the caller's turn is over.
func (s *openAIStream) finish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done = true
}

func (s *openAIStream) event(ev wire.SSEEvent) {
	data := strings.TrimSpace(ev.Data)
	if data == "[DONE]" {
		s.ended = true
		return
	}
	if data == "" {
		return
	}
	var c openAIChunk
	if err := json.Unmarshal([]byte(data), &c); err != nil {
		return // as langchaingo does: a malformed chunk is skipped
	}
	s.chunk(&c)
}

func (s *openAIStream) chunk(c *openAIChunk) {
	s.seen = true
	if c.ID != "" {
		s.id = c.ID
	}
	if c.Model != "" {
		s.model = c.Model
	}
	if c.Error != nil {
		s.errMsg, s.errType = c.Error.Message, c.Error.Type
		s.errCode, _ = c.Error.Code.(string)
		if s.errMsg == "" && s.errType == "" {
			s.errMsg = "error in stream"
		}
	}
	if c.Usage != nil {
		s.usage = c.Usage.usage()
		s.gotUse = true
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			s.stop = *ch.FinishReason
			s.ended = true
		}
		for _, r := range []*string{ch.Delta.ReasoningContent, ch.Delta.Reasoning} {
			if r != nil {
				s.reason.WriteString(*r)
			}
		}
		if r := ch.Delta.Refusal; r != nil {
			s.refusal.WriteString(*r)
		}
		if d := ch.Delta.Content; d != nil && *d != "" {
			s.text.WriteString(*d)
			if !s.done && s.onText != nil {
				s.onText(*d)
			}
		}
		for _, tc := range ch.Delta.ToolCalls {
			var call *streamCall
			switch {
			case tc.Index != nil:
				call = s.byIndex[*tc.Index]
				if call == nil {
					call = &streamCall{}
					s.byIndex[*tc.Index] = call
					s.calls = append(s.calls, call)
				}
			case tc.ID != "" || len(s.calls) == 0:
				// No index: a delta with a new id starts a new call.
				if n := len(s.calls); n > 0 && s.calls[n-1].id == tc.ID {
					call = s.calls[n-1]
				} else {
					call = &streamCall{}
					s.calls = append(s.calls, call)
				}
			default:
				call = s.calls[len(s.calls)-1]
			}
			if call.id == "" {
				call.id = tc.ID
			}
			if call.name == "" {
				call.name = tc.Function.Name
			}
			call.args.WriteString(tc.Function.Arguments)
		}
	}
}

// apply replaces the parts of out that the stream carries, if a stream
// was seen, and reports whether it was.
func (s *openAIStream) apply(out *llm.Response) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.seen {
		return false
	}
	out.Message.Text = s.text.String()
	out.Message.Reasoning = s.reason.String()
	out.Message.ToolCalls = s.toolCalls()
	if s.id != "" {
		out.ID = s.id
	}
	if s.model != "" {
		out.Model = s.model
	}
	if s.stop != "" {
		out.StopReason = s.stop
	}
	if s.gotUse {
		out.Usage = s.usage
	}
	return true
}

func (s *openAIStream) toolCalls() []llm.ToolCall {
	var calls []llm.ToolCall
	for _, c := range s.calls {
		if c.name == "" && c.id == "" && c.args.Len() == 0 {
			continue
		}
		calls = append(calls, llm.ToolCall{ID: c.id, Name: c.name, Args: wire.NormalizeArgs(c.args.String())})
	}
	return calls
}
