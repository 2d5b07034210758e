package ollama

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/wire"
)

// Defaults of the Ollama provider.
const (
	// defaultModel is the model used when none is configured.
	defaultModel = "llama3.2"
	// defaultBaseURL is where a local Ollama server listens.
	defaultBaseURL = "http://localhost:11434"
)

// ollamaModel is a Model that speaks Ollama's /api/chat with net/http.
type ollamaModel struct {
	name  string
	model string
	url   string
	// endpoint is the server's root, for Capabilities.Endpoint.
	endpoint string
	key      string
	hc       *http.Client
	cls      wire.Classifier
	policy   failure.Policy
	log      zerolog.Logger
}

// newOllama returns a model of the Ollama server cfg names.
func newOllama(cfg provider.Config) (*ollamaModel, error) {
	if cfg.Model == "" {
		cfg.Model = defaultModel
	}
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = defaultBaseURL
	}
	base = strings.TrimSuffix(strings.TrimSuffix(base, "/v1"), "/api")
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	name := "ollama/" + cfg.Model
	m := &ollamaModel{name: name, model: cfg.Model, endpoint: base, url: base + "/api/chat", key: cfg.APIKey, hc: hc,
		cls: wire.Classifier{Name: name, Scrub: wire.NewScrubber(cfg.APIKey)}, policy: cfg.Policy, log: zerolog.Nop()}
	if cfg.Logger != nil {
		m.log = *cfg.Logger
	}
	return m, nil
}

// hostURL reads OLLAMA_HOST as Ollama's own client does: the scheme
// defaults to http, the host to 127.0.0.1, and the port to 11434 (80 or
// 443 when the scheme is given as http or https).
func hostURL(s string) string {
	scheme, hostport, ok := strings.Cut(strings.TrimSpace(s), "://")
	port := "11434"
	switch {
	case !ok:
		scheme, hostport = "http", scheme
	case scheme == "https":
		port = "443"
	case scheme == "http":
		port = "80"
	}
	hostport, path, _ := strings.Cut(hostport, "/")
	host, p, err := net.SplitHostPort(hostport)
	switch {
	case err == nil:
		port = p
	case hostport != "":
		host = strings.Trim(hostport, "[]")
	}
	if host == "" {
		host = "127.0.0.1"
	}
	u := scheme + "://" + net.JoinHostPort(host, port)
	if path = strings.Trim(path, "/"); path != "" {
		u += "/" + path
	}
	return u
}

// Name returns "ollama/<model>".
func (o *ollamaModel) Name() string { return o.name }

// Capabilities says what the model takes, judged by its name: images for
// the vision families (llava, llama3.2-vision, gemma3, qwen2.5vl, ...),
// thinking for the thinking ones (deepseek-r1, qwen3, gpt-oss, ...), and
// answer schemas for every model, which the server enforces. Endpoint is
// the server's root.
func (o *ollamaModel) Capabilities() llm.Capabilities {
	c := capabilitiesOf(o.model)
	c.Endpoint = o.endpoint
	return c
}

// Generate runs one model turn; with req.OnText set, the answer streams.
func (o *ollamaModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return wire.GenerateUnder(ctx, o.policy, o.name, req, o.generate)
}

// chatRequest is the body of POST /api/chat.
type chatRequest struct {
	Model    string          `json:"model"`
	Messages []message       `json:"messages"`
	Tools    []tool          `json:"tools,omitempty"`
	Format   json.RawMessage `json:"format,omitempty"`
	Options  *options        `json:"options,omitempty"`
	// Stream is sent always: the server streams unless told not to.
	Stream bool `json:"stream"`
	// Think is true, or an effort ("low", "medium", "high") for the models
	// that take one (gpt-oss).
	Think json.RawMessage `json:"think,omitempty"`
}

type options struct {
	Temperature *float64 `json:"temperature,omitempty"`
	NumPredict  int      `json:"num_predict,omitempty"`
	Stop        []string `json:"stop,omitempty"`
}

// message is a chat message of either direction.
type message struct {
	Role     string `json:"role"`
	Content  string `json:"content"`
	Thinking string `json:"thinking,omitempty"`
	// Images are the message's images, base64 in JSON.
	Images    [][]byte   `json:"images,omitempty"`
	ToolCalls []toolCall `json:"tool_calls,omitempty"`
	// ToolName names the tool a tool message answers.
	ToolName string `json:"tool_name,omitempty"`
}

type toolCall struct {
	// ID is the call's id, which newer servers send.
	ID       string `json:"id,omitempty"`
	Function struct {
		Index *int   `json:"index,omitempty"`
		Name  string `json:"name"`
		// Arguments is an object.
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type tool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// chatResponse is the answer, or one line of a streamed answer.
type chatResponse struct {
	Model           string  `json:"model"`
	Message         message `json:"message"`
	Done            bool    `json:"done"`
	DoneReason      string  `json:"done_reason"`
	PromptEvalCount int     `json:"prompt_eval_count"`
	EvalCount       int     `json:"eval_count"`
	Error           string  `json:"error"`
}

// body builds the request body.
func (o *ollamaModel) body(req *llm.Request) (chatRequest, error) {
	out := chatRequest{Model: o.model, Stream: req.OnText != nil, Messages: messages(req)}
	for _, d := range req.Tools {
		var t tool
		t.Type = "function"
		t.Function.Name, t.Function.Description, t.Function.Parameters = d.Name, d.Description, wire.ToolSchema(d.Schema)
		out.Tools = append(out.Tools, t)
	}
	if req.Output != nil {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(req.Output.Schema, &obj); err != nil || obj == nil {
			if err == nil {
				err = errors.New("it is JSON but not an object")
			}
			return out, &failure.Error{Kind: failure.Config, Source: failure.SourceModel, Name: o.name, Op: "generate",
				Message: "Request.Output.Schema is not a JSON object: " + err.Error(), Err: err}
		}
		out.Format = req.Output.Schema
	}
	if req.Temperature != nil || req.MaxTokens > 0 || len(req.StopSequences) > 0 {
		out.Options = &options{Temperature: req.Temperature, NumPredict: req.MaxTokens, Stop: req.StopSequences}
	}
	out.Think = think(o.model, req.Reasoning)
	return out, nil
}

// messages converts the conversation. Images go in a message's images;
// text documents are inlined; other parts are described in text. A tool
// result's images go in a user message after the turn's tool messages, as
// for the chat APIs whose tool messages take text only.
func messages(req *llm.Request) []message {
	out := make([]message, 0, len(req.Messages)+1)
	if req.System != "" {
		out = append(out, message{Role: "system", Content: req.System})
	}
	for _, m := range req.Messages {
		switch m.Role {
		case llm.RoleAssistant:
			msg := message{Role: "assistant", Content: m.Text, Thinking: m.Reasoning}
			for _, c := range m.ToolCalls {
				var tc toolCall
				tc.Function.Name, tc.Function.Arguments = c.Name, wire.ObjectOrEmpty(c.Args)
				msg.ToolCalls = append(msg.ToolCalls, tc)
			}
			out = append(out, msg)
		case llm.RoleTool:
			var media message
			for _, r := range m.ToolResults {
				text, images := content(r.Content, r.Parts)
				if len(images) > 0 {
					text += fmt.Sprintf("\n(%d image(s) of this result follow in the next user message.)", len(images))
					media.Content += fmt.Sprintf("Images of the result of tool call %s (%s), in order: %d.\n", r.CallID, r.Name, len(images))
					media.Images = append(media.Images, images...)
				}
				out = append(out, message{Role: "tool", Content: text, ToolName: r.Name})
			}
			if len(media.Images) > 0 {
				media.Role = "user"
				out = append(out, media)
			}
		default:
			text, images := content(m.Text, m.Parts)
			out = append(out, message{Role: "user", Content: text, Images: images})
		}
	}
	return out
}

// content is the text and images of a message's text and parts.
func content(text string, parts []llm.Part) (string, [][]byte) {
	var b strings.Builder
	b.WriteString(text)
	add := func(s string) {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(s)
	}
	var images [][]byte
	for _, p := range parts {
		mt := strings.ToLower(strings.TrimSpace(p.MediaType))
		switch {
		case p.Kind == llm.PartText:
			add(p.Text)
		case p.Kind == llm.PartImage && len(p.Data) > 0:
			images = append(images, p.Data)
		case p.Kind == llm.PartDocument && len(p.Data) > 0 && strings.HasPrefix(mt, "text/") && utf8.Valid(p.Data):
			head := "[document"
			if p.Name != "" {
				head += fmt.Sprintf(" %q", p.Name)
			}
			add(head + " " + mt + "]\n" + string(p.Data))
		default:
			add(p.Describe())
		}
	}
	return b.String(), images
}

func (o *ollamaModel) generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, o.cls.Err(ctx, err)
	}
	cr, err := o.body(req)
	if err != nil {
		return nil, err
	}
	hreq, err := o.cls.PostJSON(ctx, o.url, cr, "Ollama")
	if err != nil {
		return nil, err
	}
	if o.key != "" {
		hreq.Header.Set("authorization", "Bearer "+o.key)
	}
	resp, err := o.hc.Do(hreq)
	if err != nil {
		return nil, o.cls.Err(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, wire.MaxErrorBody))
		return nil, o.statusErr(resp.StatusCode, b)
	}
	in := io.LimitReader(resp.Body, wire.MaxResponseBody)
	var s *stream
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("content-type")); mt == "application/x-ndjson" {
		s = newStream(req.OnText)
		err = o.readStream(ctx, in, s)
	} else {
		// One object: its text goes to OnText once, whole.
		s = newStream(nil)
		err = o.readJSON(ctx, in, s)
		if err == nil && req.OnText != nil && s.text.Len() > 0 {
			req.OnText(s.text.String())
		}
	}
	if err != nil {
		return nil, err
	}
	out := s.response()
	o.log.Debug().Str("model", o.name).Int("tool_calls", len(out.Message.ToolCalls)).
		Int("input_tokens", out.Usage.InputTokens).Int("output_tokens", out.Usage.OutputTokens).Msg("model turn")
	return out, nil
}

// readJSON reads an answer that is one JSON object.
func (o *ollamaModel) readJSON(ctx context.Context, r io.Reader, s *stream) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return o.cls.Err(ctx, err)
	}
	var c chatResponse
	if err := json.Unmarshal(raw, &c); err != nil {
		return &failure.Error{Kind: failure.Protocol, Source: failure.SourceModel, Name: o.name, Op: "generate",
			Message: "the model provider's answer is not valid JSON", Err: err}
	}
	s.chunk(&c)
	return o.streamErr(s)
}

// readStream reads a streamed answer until its last line (done: true).
func (o *ollamaModel) readStream(ctx context.Context, r io.Reader, s *stream) error {
	buf := make([]byte, 32<<10)
	for !s.done && s.errMsg == "" {
		n, err := r.Read(buf)
		if n > 0 {
			s.feed(buf[:n])
		}
		if errors.Is(err, io.EOF) {
			s.close()
			break
		}
		if err != nil {
			return o.cls.Err(ctx, err)
		}
	}
	s.finish()
	return o.streamErr(s)
}

// streamErr is the failure an answer reported, or the failure of a stream
// cut short.
func (o *ollamaModel) streamErr(s *stream) error {
	switch {
	case s.errMsg != "":
		if fe := o.contextLength(s.errMsg); fe != nil {
			return fe
		}
		return &failure.Error{Kind: failure.Transient, Source: failure.SourceModel, Name: o.name, Op: "generate", Retryable: true,
			Message: "the model provider failed while answering: " + o.cls.Scrub.Scrub(s.errMsg)}
	case !s.done:
		return &failure.Error{Kind: failure.Transient, Source: failure.SourceModel, Name: o.name, Op: "generate", Retryable: true,
			Message: "the model provider's answer ended before it was complete"}
	}
	return nil
}

// statusErr classifies a failed response: Ollama's body is {"error": "..."}.
func (o *ollamaModel) statusErr(status int, body []byte) error {
	var e struct {
		Error string `json:"error"`
	}
	msg := strings.TrimSpace(string(body))
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		msg = e.Error
	}
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	msg = strings.ToValidUTF8(msg, "")
	if fe := o.contextLength(msg); fe != nil {
		return fe
	}
	return o.cls.Status(wire.HTTPFailure{Status: status, Message: msg})
}

// contextLength returns the failure of an error that says the prompt does
// not fit the model's context, or nil. Ollama gives its errors no code, so
// its wording is matched.
func (o *ollamaModel) contextLength(msg string) *failure.Error {
	l := strings.ToLower(msg)
	if !strings.Contains(l, "context length") && !strings.Contains(l, "context window") && !strings.Contains(l, "prompt too long") {
		return nil
	}
	return o.cls.TooLong(msg)
}

// newCallID returns an id for a tool call the server sent without one.
func newCallID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}
