package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/internal/redact"
	"github.com/switchboard-dev/switchboard/llm"
)

// Scrubber removes the provider's credentials from text before it reaches
// an error: the exact key (and its tail, which providers echo in messages
// such as "Incorrect API key provided: sk-...abcd"), then the generic
// secret patterns of internal/redact.
type Scrubber []string

func NewScrubber(secrets ...string) Scrubber {
	var s Scrubber
	for _, k := range secrets {
		if len(k) >= 4 {
			s = append(s, k)
		}
	}
	return s
}

func (s Scrubber) Scrub(text string) string {
	for _, k := range s {
		text = strings.ReplaceAll(text, k, "[REDACTED]")
		if len(k) >= 16 {
			// A provider may echo a key with its middle elided; drop any
			// token that ends with the key's last 8 characters.
			tail := regexp.QuoteMeta(k[len(k)-8:])
			text = regexp.MustCompile(`\S*`+tail).ReplaceAllString(text, "[REDACTED]")
		}
	}
	if len(s) > 0 {
		// A masked key ("sk-proj-****abcd") says which key it was.
		text = regexp.MustCompile(`\S*\*{3,}\S*`).ReplaceAllString(text, "[REDACTED]")
	}
	return redact.Redact(text)
}

// scrubbedError carries the text of a cause with secrets removed. It keeps
// the kind-bearing part of the original chain reachable (context and
// network errors) but not the text of a provider's message.
type scrubbedError struct {
	text  string
	cause error
}

func (e *scrubbedError) Error() string { return e.text }

func (e *scrubbedError) Unwrap() error { return e.cause }

// scrubErr returns err with any secret removed from its text. An error
// whose text holds no secret is returned as is.
func (s Scrubber) ScrubErr(err error) error {
	if err == nil {
		return nil
	}
	text := err.Error()
	clean := s.Scrub(text)
	if clean == text {
		return err
	}
	// Keep errors.Is working for context errors without exposing the text.
	var cause error
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		cause = context.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		cause = context.Canceled
	}
	return &scrubbedError{text: clean, cause: cause}
}

// HTTPFailure is the outcome of one HTTP exchange with a provider.
type HTTPFailure struct {
	Status int
	// Message is the provider's own description of the failure, from its
	// JSON error body (already scrubbed).
	Message string
	// ErrType is the provider's error type ("rate_limit_error", ...).
	ErrType string
}

// providerErrorBody is the error envelope of both OpenAI
// ({"error":{"message","type","code"}}) and Anthropic
// ({"type":"error","error":{"type","message"}}).
type providerErrorBody struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	} `json:"error"`
	Message string `json:"message"`
}

// ParseErrorBody extracts the message and type of a provider's error body;
// a body that is not JSON is kept as (trimmed) text.
func ParseErrorBody(body []byte) (msg, typ string) {
	var b providerErrorBody
	if err := json.Unmarshal(body, &b); err == nil {
		msg, typ = b.Error.Message, b.Error.Type
		if msg == "" {
			msg = b.Message
		}
		if msg != "" || typ != "" {
			return msg, typ
		}
	}
	msg = strings.TrimSpace(string(body))
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	return strings.ToValidUTF8(msg, ""), ""
}

// StatusKind maps a provider's HTTP status to a failure kind: 429 and 5xx
// (including Anthropic's 529 "overloaded") are Transient, 401 and 403 are
// PermissionDenied, 408 is Timeout, any other 4xx is Model (the provider
// refused the request; retrying it unchanged will not help).
func StatusKind(code int) failure.Kind {
	switch k := failure.KindOfStatus(code); k {
	case failure.Transient, failure.Timeout, failure.PermissionDenied:
		return k
	}
	return failure.Model
}

// Classifier turns what went wrong in a provider call into a
// *failure.Error with Source failure.SourceModel and Name the model's name.
type Classifier struct {
	// Name is the model's name, the Name of every failure.
	Name string
	// Scrub removes the provider's secrets from failures' text.
	Scrub Scrubber
	// Library, if set, classifies the errors of a provider library (the
	// kind and message of langchaingo's *llms.Error); ok is false for an
	// error it does not know.
	Library func(err error) (kind failure.Kind, msg string, ok bool)
}

// status classifies a failed HTTP response.
func (c Classifier) Status(h HTTPFailure) *failure.Error {
	kind := StatusKind(h.Status)
	msg := fmt.Sprintf("the model provider answered HTTP %d", h.Status)
	if h.ErrType != "" {
		msg += " (" + h.ErrType + ")"
	}
	if h.Message != "" {
		msg += ": " + c.Scrub.Scrub(h.Message)
	}
	return &failure.Error{Kind: kind, Source: failure.SourceModel, Name: c.Name, Op: "generate",
		Retryable: kind == failure.Transient, Message: msg}
}

// TooLong is the failure of a request the provider refused because the
// prompt does not fit the model's context window: failure.Budget, as the
// agent reports a prompt it knows will not fit (the window is a budget of
// tokens; retrying the same prompt cannot help, compacting it can), not
// retryable, with the provider's own words (scrubbed) when it gave any.
// Every provider reports a context-length refusal through it, so the kind
// is the same whichever model refused.
func (c Classifier) TooLong(providerSaid string) *failure.Error {
	msg := "the prompt does not fit the model's context window"
	if providerSaid != "" {
		msg += " (the provider said: " + c.Scrub.Scrub(providerSaid) + ")"
	}
	return &failure.Error{Kind: failure.Budget, Source: failure.SourceModel, Name: c.Name, Op: "generate", Message: msg}
}

// err classifies an error from a call: the context's own state first (a
// provider library may hide the context error behind its own text), then
// the failure taxonomy's classification of transport errors; anything else
// is a Model failure.
func (c Classifier) Err(ctx context.Context, err error) *failure.Error {
	var fe *failure.Error
	if errors.As(err, &fe) {
		cp := *fe
		if cp.Source == "" {
			cp.Source = failure.SourceModel
		}
		if cp.Name == "" {
			cp.Name = c.Name
		}
		return &cp
	}
	clean := c.Scrub.ScrubErr(err)
	out := &failure.Error{Source: failure.SourceModel, Name: c.Name, Op: "generate", Err: clean}
	switch cerr := ctx.Err(); {
	case errors.Is(cerr, context.DeadlineExceeded):
		out.Kind, out.Message = failure.Timeout, "the model call timed out"
		out.Err = errors.Join(context.DeadlineExceeded, clean)
		return out
	case cerr != nil:
		out.Kind, out.Message = failure.Canceled, "the model call was cancelled"
		out.Err = errors.Join(context.Canceled, clean)
		return out
	}
	switch k := failure.From(err).Kind; k {
	case failure.Transient, failure.Timeout:
		out.Kind, out.Retryable = k, k == failure.Transient
		out.Message = "the model provider could not be reached"
		return out
	case failure.Canceled:
		out.Kind, out.Message = k, "the model call was cancelled"
		return out
	}
	if c.Library != nil {
		if kind, msg, ok := c.Library(err); ok {
			out.Kind, out.Retryable = kind, kind == failure.Transient
			out.Message = c.Scrub.Scrub(msg)
			return out
		}
	}
	if code := statusInText(err.Error()); code != 0 {
		f := c.Status(HTTPFailure{Status: code})
		f.Err = clean
		return f
	}
	out.Kind = failure.Model
	out.Message = "the model provider call failed: " + c.Scrub.Scrub(clean.Error())
	return out
}

var statusText = regexp.MustCompile(`(?i)status(?: code)?:? (\d{3})\b`)

// statusInText finds an HTTP status in a provider library's error text
// ("API returned unexpected status code: 429: ..."), for models whose
// responses we cannot observe directly.
func statusInText(s string) int {
	m := statusText.FindStringSubmatch(s)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	if n < 400 || n > 599 {
		return 0
	}
	return n
}

// GenerateUnder runs gen for req through the policy (nil: failure.Default),
// keyed by the model's name.
func GenerateUnder(ctx context.Context, policy failure.Policy, name string, req *llm.Request,
	gen func(context.Context, *llm.Request) (*llm.Response, error)) (*llm.Response, error) {
	var resp *llm.Response
	err := failure.Or(policy).Execute(ctx, failure.Key{Source: failure.SourceModel, Name: name}, func(ctx context.Context) error {
		var err error
		resp, err = gen(ctx, req)
		return err
	})
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// MaxErrorBody bounds how much of a failed response's body is read.
const MaxErrorBody = 64 << 10

// MaxResponseBody bounds a model's answer, JSON or streamed: a longer one
// ends as cut short.
const MaxResponseBody = 32 << 20

// do sends a provider request: a transport failure or a status outside
// 2xx (its body's message read, bounded) is a classified failure; on
// success the caller closes the body.
func (c Classifier) Do(ctx context.Context, hc *http.Client, req *http.Request) (*http.Response, error) {
	resp, err := hc.Do(req)
	if err != nil {
		return nil, c.Err(ctx, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, MaxErrorBody))
		msg, typ := ParseErrorBody(b)
		return nil, c.Status(HTTPFailure{Status: resp.StatusCode, Message: msg, ErrType: typ})
	}
	return resp, nil
}

// PostJSON is a POST of v, encoded as JSON, to url: a body that does not
// encode is a Model failure (a tool or answer schema that is not JSON),
// a url that does not parse a Config failure naming the provider's base
// URL (provider: "Anthropic", ...).
func (c Classifier) PostJSON(ctx context.Context, url string, v any, provider string) (*http.Request, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, &failure.Error{Kind: failure.Model, Source: failure.SourceModel, Name: c.Name, Op: "generate",
			Message: "the request could not be encoded (a tool or answer schema is not valid JSON?)", Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, &failure.Error{Kind: failure.Config, Source: failure.SourceModel, Name: c.Name, Op: "generate",
			Message: "the " + provider + " base URL is invalid", Err: c.Scrub.ScrubErr(err)}
	}
	req.Header.Set("content-type", "application/json")
	return req, nil
}
