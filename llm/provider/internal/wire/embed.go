package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/switchboard-dev/switchboard/failure"
)

// MaxEmbedTexts bounds the texts of one Embed call.
const MaxEmbedTexts = 4096

// Embed embeds texts in batches of at most size through one exchange
// each (run under policy, nil: failure.Default, keyed by name), and
// checks the answer: one vector per text, all of one non-zero length. A
// failure's Op is "embed".
func (c Classifier) Embed(ctx context.Context, policy failure.Policy, texts []string, size int,
	batch func(ctx context.Context, texts []string) ([][]float32, error)) ([][]float32, error) {
	if len(texts) > MaxEmbedTexts {
		return nil, c.embedFailure(failure.InvalidArgs, fmt.Sprintf("%d texts to embed, more than %d", len(texts), MaxEmbedTexts))
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += size {
		part := texts[start:min(start+size, len(texts))]
		var vecs [][]float32
		err := failure.Or(policy).Execute(ctx, failure.Key{Source: failure.SourceModel, Name: c.Name}, func(ctx context.Context) error {
			var err error
			vecs, err = batch(ctx, part)
			return err
		})
		if err != nil {
			var fe *failure.Error
			if errors.As(err, &fe) && fe.Op == "generate" {
				cp := *fe
				cp.Op = "embed"
				return nil, &cp
			}
			return nil, err
		}
		if len(vecs) != len(part) {
			return nil, c.embedFailure(failure.Protocol, fmt.Sprintf("the provider answered %d vectors for %d texts", len(vecs), len(part)))
		}
		out = append(out, vecs...)
	}
	for i, v := range out {
		if len(v) == 0 || len(v) != len(out[0]) {
			return nil, c.embedFailure(failure.Protocol, fmt.Sprintf("vector %d has %d dimensions, vector 0 has %d", i, len(v), len(out[0])))
		}
	}
	return out, nil
}

func (c Classifier) embedFailure(kind failure.Kind, msg string) *failure.Error {
	return &failure.Error{Kind: kind, Source: failure.SourceModel, Name: c.Name, Op: "embed", Message: msg}
}

// DecodeJSON sends req and decodes a 2xx answer's JSON body (bounded by
// MaxResponseBody) into v; statusErr classifies any other status from
// its body (bounded by MaxErrorBody; nil: Classifier.Status of the
// OpenAI-style error envelope). An answer that is not JSON is a Protocol
// failure.
func (c Classifier) DecodeJSON(ctx context.Context, hc *http.Client, req *http.Request, v any,
	statusErr func(status int, body []byte) error) error {
	resp, err := hc.Do(req)
	if err != nil {
		return c.Err(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, MaxErrorBody))
		if statusErr != nil {
			return statusErr(resp.StatusCode, b)
		}
		msg, typ := ParseErrorBody(b)
		return c.Status(HTTPFailure{Status: resp.StatusCode, Message: msg, ErrType: typ})
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBody))
	if err != nil {
		return c.Err(ctx, err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return &failure.Error{Kind: failure.Protocol, Source: failure.SourceModel, Name: c.Name, Op: "embed",
			Message: "the model provider's answer is not valid JSON", Err: err}
	}
	return nil
}
