package anthropic

import (
	"context"
	"io"
	"net/http"
	"strings"

	"github.com/switchboard-dev/switchboard/llm/provider/internal/wire"
)

// do sends a request: a transport failure or a status outside 2xx is a
// classified failure (wire.Classifier), and a request the API refuses as
// longer than the model's context window is wire.Classifier.TooLong.
func (a *anthropicModel) do(ctx context.Context, req *http.Request) (*http.Response, error) {
	resp, err := a.hc.Do(req)
	if err != nil {
		return nil, a.cls.Err(ctx, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		return resp, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, wire.MaxErrorBody))
	msg, typ := wire.ParseErrorBody(b)
	if resp.StatusCode == http.StatusBadRequest && tooLong(typ, msg) {
		return nil, a.cls.TooLong(msg)
	}
	return nil, a.cls.Status(wire.HTTPFailure{Status: resp.StatusCode, Message: msg, ErrType: typ})
}

// tooLong reports whether an invalid_request_error is the API's refusal of
// a prompt longer than the context window: "prompt is too long: 208310
// tokens > 200000 maximum", or "input length and `max_tokens` exceed
// context limit: ..." (the answer's cap counted in). The API tells it only
// in the message's text.
func tooLong(typ, msg string) bool {
	if typ != "invalid_request_error" {
		return false
	}
	m := strings.ToLower(msg)
	return strings.Contains(m, "prompt is too long") || strings.Contains(m, "exceed context limit")
}
