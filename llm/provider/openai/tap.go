package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/wire"
)

// tap records one HTTP exchange of a provider library on behalf of the
// Generate call whose context carries it: the transport error with its
// chain intact, a failed response's status and body, and, when streaming,
// the stream as the library reads it.
type tap struct {
	mu     sync.Mutex
	err    error
	status int
	body   []byte
	stream *openAIStream
	// patch, if set, is applied to the request body (chat_body.go).
	patch *bodyPatch
	// answer, if set, keeps a copy of a successful answer not streamed
	// (bounded by wire.MaxResponseBody), for what langchaingo does not read
	// of it: a structured answer's refusal.
	answer *bytes.Buffer
}

type tapKey struct{}

func withTap(ctx context.Context, t *tap) context.Context {
	return context.WithValue(ctx, tapKey{}, t)
}

// tapDoer is the HTTP client handed to a provider library: it runs the
// request with next and records the exchange in the request context's tap.
type tapDoer struct{ next *http.Client }

// Do sends req.
func (d tapDoer) Do(req *http.Request) (*http.Response, error) {
	t, _ := req.Context().Value(tapKey{}).(*tap)
	if t != nil && t.patch != nil {
		if err := t.patch.rewrite(req); err != nil {
			t.mu.Lock()
			t.err = &failure.Error{Kind: failure.Internal, Source: failure.SourceModel, Op: "generate",
				Message: "the request body could not be completed", Err: err}
			t.mu.Unlock()
			return nil, t.err
		}
	}
	resp, err := d.next.Do(req)
	if t == nil {
		return resp, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		t.err = err
		return resp, err
	}
	t.status = resp.StatusCode
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		body, rerr := io.ReadAll(io.LimitReader(resp.Body, wire.MaxErrorBody))
		_ = resp.Body.Close()
		if rerr != nil && t.err == nil {
			t.err = rerr
		}
		t.body = body
		resp.Body = io.NopCloser(bytes.NewReader(body))
		return resp, nil
	}
	switch {
	case t.stream != nil:
		resp.Body = &teeBody{ReadCloser: resp.Body, s: t.stream}
	case t.answer != nil:
		resp.Body = &copyBody{ReadCloser: resp.Body, to: t.answer}
	}
	return resp, nil
}

// failure classifies what the tap saw, or returns nil when the exchange
// succeeded (or never happened).
func (t *tap) failure(ctx context.Context, c wire.Classifier) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return c.Err(ctx, t.err)
	}
	if t.status != 0 && (t.status < 200 || t.status > 299) {
		if fe := contextLength(c, t.body); fe != nil {
			return fe
		}
		msg, typ := wire.ParseErrorBody(t.body)
		return c.Status(wire.HTTPFailure{Status: t.status, Message: msg, ErrType: typ})
	}
	if s := t.stream; s != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.errCode == codeContextLength {
			return contextLengthError(c, s.errMsg)
		}
		if s.errMsg != "" || s.errType != "" {
			// An error inside a 200 stream: the provider failed mid-answer.
			kind := failure.Transient
			if s.errType == "invalid_request_error" {
				kind = failure.Model
			}
			return &failure.Error{Kind: kind, Source: failure.SourceModel, Name: c.Name, Op: "generate",
				Retryable: kind == failure.Transient,
				Message:   "the model provider failed while streaming: " + c.Scrub.Scrub(s.errMsg),
				Err:       errors.New(c.Scrub.Scrub(s.errType + ": " + s.errMsg))}
		}
		if s.eof && !s.ended {
			// The body ended cleanly but the stream did not: a proxy or the
			// server cut it short. langchaingo would return the fragment.
			return &failure.Error{Kind: failure.Transient, Source: failure.SourceModel, Name: c.Name, Op: "generate",
				Retryable: true, Message: "the model provider's stream ended before it was complete"}
		}
	}
	return nil
}

// refusal returns the refusal of the answer the tap saw ("" for none):
// with an answer schema, a model that declines says so in the message's
// "refusal", not in its content.
func (t *tap) refusal() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.stream; s != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.refusal.String()
	}
	if t.answer == nil {
		return ""
	}
	var a struct {
		Choices []struct {
			Message struct {
				Refusal string `json:"refusal"`
			} `json:"message"`
		} `json:"choices"`
	}
	if json.Unmarshal(t.answer.Bytes(), &a) != nil || len(a.Choices) == 0 {
		return ""
	}
	return a.Choices[0].Message.Refusal
}

// refused is the failure of an answer the model declined to give.
func refused(c wire.Classifier, refusal string) *failure.Error {
	return &failure.Error{Kind: failure.Model, Source: failure.SourceModel, Name: c.Name, Op: "generate",
		Message: "the model refused to give the answer asked for: " + c.Scrub.Scrub(refusal)}
}

// copyBody keeps a copy of what is read of a body, up to
// wire.MaxResponseBody.
type copyBody struct {
	io.ReadCloser
	to *bytes.Buffer
}

// Read reads from the body and keeps what it read.
func (b *copyBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if room := wire.MaxResponseBody - b.to.Len(); n > 0 && room > 0 {
		b.to.Write(p[:min(n, room)])
	}
	return n, err
}

// teeBody feeds a response body to a stream assembler as it is read.
type teeBody struct {
	io.ReadCloser
	s *openAIStream
}

// Read reads from the body and feeds what it read to the assembler.
func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.s.feed(p[:n])
	}
	if errors.Is(err, io.EOF) {
		b.s.close()
	}
	return n, err
}

// codeContextLength is the error code of a request whose prompt is longer
// than the model's context window.
const codeContextLength = "context_length_exceeded"

// contextLength returns the failure of an error body that says the prompt
// does not fit the model's context window, or nil.
func contextLength(c wire.Classifier, body []byte) *failure.Error {
	var b struct {
		Error struct {
			Message string `json:"message"`
			Code    string `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &b) != nil || b.Error.Code != codeContextLength {
		return nil
	}
	return contextLengthError(c, b.Error.Message)
}

// contextLengthError is a prompt too long for the model's window
// (wire.Classifier.TooLong), with the provider's code in the message.
func contextLengthError(c wire.Classifier, msg string) *failure.Error {
	if msg == "" {
		msg = codeContextLength
	} else {
		msg = codeContextLength + ": " + msg
	}
	return c.TooLong(msg)
}
