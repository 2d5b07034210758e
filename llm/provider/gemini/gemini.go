package gemini

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/rs/zerolog"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/wire"
)

// Defaults of the Gemini provider.
const (
	// defaultModel is the model used when none is configured.
	defaultModel = "gemini-2.5-flash"
	// defaultBaseURL is the Gemini API's base URL.
	defaultBaseURL = "https://generativelanguage.googleapis.com"
	// apiVersion is the API version in every request's path.
	apiVersion = "v1beta"
	// contextWindow is the input token limit of every Gemini model from
	// 1.5 on (1,048,576).
	contextWindow = 1 << 20
	// maxPartBytes caps one inline part: Gemini takes up to 100 MB of
	// base64 per request (less for some types: 50 MB for a PDF), and 50 MB
	// is 67 MB in base64, leaving room for the rest of the request.
	maxPartBytes = 50 << 20
)

// geminiModel is a Model that speaks the Gemini API's generateContent.
type geminiModel struct {
	name  string
	model string
	base  string // {base}/v1beta/models/{model}
	// endpoint is the base URL, for Capabilities.Endpoint.
	endpoint string
	key      string
	maxTok   int
	gen      generation
	hc       *http.Client
	cls      wire.Classifier
	policy   failure.Policy
	log      zerolog.Logger
}

// generation is what a model's name says of its family: Gemini major.minor
// (0.0 when the name does not say, as for "gemini-flash-latest").
type generation struct {
	major, minor int
	latest       bool // an alias of the current models ("-latest")
}

var versionRE = regexp.MustCompile(`^gemini-(\d+)(?:\.(\d+))?`)

func generationOf(model string) generation {
	m := strings.ToLower(model)
	g := generation{latest: strings.HasSuffix(m, "-latest")}
	if v := versionRE.FindStringSubmatch(m); v != nil {
		g.major, _ = strconv.Atoi(v[1])
		if v[2] != "" {
			g.minor, _ = strconv.Atoi(v[2])
		}
	}
	return g
}

// atLeast reports whether the model is known to be Gemini major.minor or
// later.
func (g generation) atLeast(major, minor int) bool {
	return g.major > major || (g.major == major && g.minor >= minor)
}

// reasons: Gemini 2.5 and later think (the -latest aliases name them).
func (g generation) reasons() bool { return g.atLeast(2, 5) || g.latest }

// thinkingLevels: Gemini 3 and later take thinkingLevel.
func (g generation) thinkingLevels() bool { return g.atLeast(3, 0) }

// toolsWithJSON: Gemini 3 and later combine function calling with JSON
// mode; earlier models refuse the pair.
func (g generation) toolsWithJSON() bool { return g.atLeast(3, 0) }

// mediaInResponses: Gemini 3 and later take media inside a
// functionResponse.
func (g generation) mediaInResponses() bool { return g.atLeast(3, 0) }

func newGemini(cfg provider.Config) (*geminiModel, error) {
	if cfg.APIKey == "" {
		return nil, failure.New(failure.Config, failure.SourceModel, "the Gemini provider needs an API key (set GEMINI_API_KEY or GOOGLE_API_KEY)")
	}
	model := strings.TrimPrefix(strings.TrimSpace(cfg.Model), "models/")
	if model == "" {
		model = defaultModel
	}
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = defaultBaseURL
	}
	base = strings.TrimSuffix(base, "/"+apiVersion)
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	name := Name + "/" + model
	g := &geminiModel{name: name, model: model, endpoint: base, base: base + "/" + apiVersion + "/models/" + url.PathEscape(model),
		key: cfg.APIKey, maxTok: cfg.MaxTokens, gen: generationOf(model), hc: hc,
		cls: wire.Classifier{Name: name, Scrub: wire.NewScrubber(cfg.APIKey)}, policy: cfg.Policy, log: zerolog.Nop()}
	if cfg.Logger != nil {
		g.log = *cfg.Logger
	}
	return g, nil
}

// Name returns "gemini/<model>".
func (g *geminiModel) Name() string { return g.name }

// Capabilities says what the model takes: images, audio and documents
// (inline up to 50 MB a part, or by URL), structured output, reasoning for
// Gemini 2.5 and later, and the implicit prompt cache, whose reads are
// reported. Endpoint is the base URL.
func (g *geminiModel) Capabilities() llm.Capabilities {
	c := llm.Capabilities{Accepts: []llm.PartKind{llm.PartImage, llm.PartAudio, llm.PartDocument},
		MaxPartBytes: maxPartBytes, StructuredOutput: true, Reasoning: g.gen.reasons(), PromptCache: true,
		Endpoint: g.endpoint}
	if g.gen.atLeast(1, 5) || g.gen.latest {
		c.ContextWindow = contextWindow
	}
	return c
}

// Generate runs one model turn; with req.OnText set, the answer streams.
func (g *geminiModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return wire.GenerateUnder(ctx, g.policy, g.name, req, g.generate)
}

func (g *geminiModel) generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, g.cls.Err(ctx, err)
	}
	u := g.base + ":generateContent"
	if req.OnText != nil {
		u = g.base + ":streamGenerateContent?alt=sse"
	}
	hreq, err := g.cls.PostJSON(ctx, u, g.toGemini(req), "Gemini")
	if err != nil {
		return nil, err
	}
	hreq.Header.Set("x-goog-api-key", g.key)
	if req.OnText != nil {
		hreq.Header.Set("accept", "text/event-stream")
	}
	resp, err := g.hc.Do(hreq)
	if err != nil {
		return nil, g.cls.Err(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, wire.MaxErrorBody))
		return nil, g.statusFailure(resp.StatusCode, parseError(b))
	}
	seed := callSeed{turn: len(req.Messages)}
	var out *llm.Response
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("content-type")); mt == "text/event-stream" {
		out, err = g.readStream(ctx, io.LimitReader(resp.Body, wire.MaxResponseBody), req.OnText, seed)
	} else {
		out, err = g.readJSON(ctx, io.LimitReader(resp.Body, wire.MaxResponseBody), seed)
		if err == nil && req.OnText != nil && out.Message.Text != "" {
			req.OnText(out.Message.Text)
		}
	}
	if err != nil {
		return nil, err
	}
	g.log.Debug().Str("model", g.name).Int("tool_calls", len(out.Message.ToolCalls)).
		Int("input_tokens", out.Usage.InputTokens).Int("output_tokens", out.Usage.OutputTokens).
		Int("cache_read_tokens", out.Usage.CacheReadTokens).Msg("model turn")
	return out, nil
}

// apiError is Gemini's error body (google.rpc.Status), also sent as a
// stream event.
type apiError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"`
	Details []struct {
		Reason string `json:"reason"`
	} `json:"details"`
}

// parseError reads an error body; a body that is not Gemini's envelope is
// kept as (trimmed) text.
func parseError(body []byte) apiError {
	var env struct {
		Error *apiError `json:"error"`
	}
	if json.Unmarshal(body, &env) == nil && env.Error != nil && (env.Error.Message != "" || env.Error.Status != "") {
		return *env.Error
	}
	msg, _ := wire.ParseErrorBody(body)
	return apiError{Message: msg}
}

// reason is the first ErrorInfo reason of the error's details.
func (e apiError) reason() string {
	for _, d := range e.Details {
		if d.Reason != "" {
			return d.Reason
		}
	}
	return ""
}

// statusFailure classifies a failed exchange (an HTTP status, or an error
// event in a stream, whose code is the status it stands for).
func (g *geminiModel) statusFailure(status int, e apiError) *failure.Error {
	if tooLong(status, e) {
		return g.cls.TooLong(e.Message)
	}
	f := g.cls.Status(wire.HTTPFailure{Status: status, Message: e.Message, ErrType: e.Status})
	switch {
	case e.reason() == "API_KEY_INVALID" || e.Status == "UNAUTHENTICATED" || e.Status == "PERMISSION_DENIED":
		f.Kind, f.Retryable = failure.PermissionDenied, false
	case e.Status == "RESOURCE_EXHAUSTED" || e.Status == "UNAVAILABLE" || e.Status == "INTERNAL":
		f.Kind, f.Retryable = failure.Transient, true
	}
	return f
}

// tooLong reports whether e is the API's refusal of a prompt longer than
// the model's input token limit: a 400 INVALID_ARGUMENT "The input token
// count (1200000) exceeds the maximum number of tokens allowed (1048576)."
// The API tells it only in the message's text.
func tooLong(status int, e apiError) bool {
	if status != http.StatusBadRequest || e.Status != "INVALID_ARGUMENT" {
		return false
	}
	m := strings.ToLower(e.Message)
	return strings.Contains(m, "input token count") && strings.Contains(m, "exceeds the maximum")
}

// protocolError is an answer that is not what the API documents.
func (g *geminiModel) protocolError(msg string, err error) *failure.Error {
	return &failure.Error{Kind: failure.Protocol, Source: failure.SourceModel, Name: g.name, Op: "generate", Message: msg, Err: err}
}

func (g *geminiModel) readJSON(ctx context.Context, r io.Reader, seed callSeed) (*llm.Response, error) {
	var res gmResponse
	if err := json.NewDecoder(r).Decode(&res); err != nil {
		if ctx.Err() != nil || !wire.IsSyntaxError(err) {
			return nil, g.cls.Err(ctx, err)
		}
		return nil, g.protocolError("the model provider's answer is not valid JSON", err)
	}
	if res.Error != nil {
		return nil, g.statusFailure(res.Error.Code, *res.Error)
	}
	var parts []json.RawMessage
	finish := ""
	if len(res.Candidates) > 0 {
		parts, finish = res.Candidates[0].Content.Parts, res.Candidates[0].FinishReason
	}
	return g.answer(answerOf{parts: parts, finish: finish, usage: res.UsageMetadata, block: res.PromptFeedback,
		candidates: len(res.Candidates), model: res.ModelVersion, id: res.ResponseID, seed: seed})
}

// answer turns an assembled answer into a Response, or the failure it
// stands for: a blocked prompt, an answer with no content that stopped for
// another reason than STOP or MAX_TOKENS (SAFETY, RECITATION,
// PROHIBITED_CONTENT, MALFORMED_FUNCTION_CALL, ...), or no candidate at
// all.
func (g *geminiModel) answer(a answerOf) (*llm.Response, error) {
	if a.block != nil && a.block.BlockReason != "" {
		msg := "Gemini blocked the prompt (" + a.block.BlockReason + ")"
		if a.block.BlockReasonMessage != "" {
			msg += ": " + g.cls.Scrub.Scrub(a.block.BlockReasonMessage)
		}
		return nil, &failure.Error{Kind: failure.Model, Source: failure.SourceModel, Name: g.name, Op: "generate", Message: msg}
	}
	if a.candidates == 0 {
		return nil, g.protocolError("the model provider's answer has no candidate", nil)
	}
	out := decodeParts(a.parts, a.seed.with(a.id))
	if out.Text == "" && len(out.ToolCalls) == 0 && a.finish != "" && a.finish != "STOP" && a.finish != "MAX_TOKENS" {
		return nil, &failure.Error{Kind: failure.Model, Source: failure.SourceModel, Name: g.name, Op: "generate",
			Message: fmt.Sprintf("Gemini withheld the answer (finishReason %s)", a.finish)}
	}
	resp := &llm.Response{Message: out, StopReason: a.finish, Model: a.model, ID: a.id}
	if a.usage != nil {
		resp.Usage = a.usage.usage()
	}
	return resp, nil
}

// answerOf is an answer as read, before it is decoded.
type answerOf struct {
	parts      []json.RawMessage
	finish     string
	usage      *gmUsage
	block      *gmPromptFeedback
	candidates int
	model, id  string
	seed       callSeed
}
