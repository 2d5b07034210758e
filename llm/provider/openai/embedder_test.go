package openai

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"reflect"
	"testing"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/providertest"
)

func TestEmbedder(t *testing.T) {
	const key = providertest.OpenAIKey
	ok := `{"object":"list","model":"text-embedding-3-small","data":[` +
		`{"object":"embedding","index":1,"embedding":[0,1.5]},{"object":"embedding","index":0,"embedding":[0.25,-1]}]}`
	cases := []struct {
		name      string
		reply     providertest.Reply
		want      [][]float32
		kind      failure.Kind
		retryable bool
	}{
		{name: "ok", reply: providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte(ok)},
			want: [][]float32{{0.25, -1}, {0, 1.5}}},
		{name: "rate limited", reply: providertest.Reply{Status: 429, ContentType: "application/json",
			Body: []byte(`{"error":{"message":"Rate limit reached for ` + key + `","type":"requests"}}`)}, kind: failure.Transient, retryable: true},
		{name: "server error", reply: providertest.Reply{Status: 503, Body: []byte(`upstream down`)}, kind: failure.Transient, retryable: true},
		{name: "bad key", reply: providertest.Reply{Status: 401, ContentType: "application/json",
			Body: []byte(`{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`)}, kind: failure.PermissionDenied},
		{name: "not json", reply: providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte(`{"data":[`)}, kind: failure.Protocol},
		{name: "too few", reply: providertest.Reply{Status: 200, ContentType: "application/json",
			Body: []byte(`{"data":[{"index":0,"embedding":[1,2]}]}`)}, kind: failure.Protocol},
		{name: "repeated index", reply: providertest.Reply{Status: 200, ContentType: "application/json",
			Body: []byte(`{"data":[{"index":0,"embedding":[1,2]},{"index":0,"embedding":[1,2]}]}`)}, kind: failure.Protocol},
		{name: "ragged", reply: providertest.Reply{Status: 200, ContentType: "application/json",
			Body: []byte(`{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[1]}]}`)}, kind: failure.Protocol},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := providertest.NewServer(t, c.reply)
			e, err := NewEmbedder(provider.Config{APIKey: key, BaseURL: srv.URL + "/v1", Policy: providertest.Once})
			if err != nil {
				t.Fatal(err)
			}
			if e.Name() != "openai/text-embedding-3-small" {
				t.Errorf("name = %q", e.Name())
			}
			got, err := e.Embed(context.Background(), []string{"delete a file", "erase a file"})
			reqs := srv.Requests()
			if len(reqs) != 1 || reqs[0].Path != "/v1/embeddings" || reqs[0].Header.Get("authorization") != "Bearer "+key {
				t.Fatalf("requests = %+v", reqs)
			}
			providertest.JSONEqual(t, "request", reqs[0].Raw,
				`{"model":"text-embedding-3-small","input":["delete a file","erase a file"],"encoding_format":"float"}`)
			if c.kind == failure.Unknown {
				if err != nil || !reflect.DeepEqual(got, c.want) {
					t.Fatalf("Embed = %v, %v; want %v", got, err, c.want)
				}
				return
			}
			providertest.CheckFailure(t, err, c.kind, c.retryable, "openai/text-embedding-3-small", key)
			if fe := failure.From(err); fe.Op != "embed" {
				t.Errorf("op = %q, want embed", fe.Op)
			}
		})
	}
}

func TestEmbedderNeedsKeyOrURL(t *testing.T) {
	if _, err := NewEmbedder(provider.Config{}); !errors.Is(err, failure.Config) {
		t.Fatalf("err = %v, want a Config failure", err)
	}
}

// roundTrip answers every request with body.
type roundTrip []byte

func (b roundTrip) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(bytes.NewReader(b)), Request: r}, nil
}

// FuzzEmbedResponse: any answer body gives vectors, one per text of one
// length, or a *failure.Error; never a panic.
func FuzzEmbedResponse(f *testing.F) {
	f.Add([]byte(`{"data":[{"index":1,"embedding":[0,1]},{"index":0,"embedding":[1,0]}]}`))
	f.Add([]byte(`{"data":[{"index":-1,"embedding":[0]},{"index":7,"embedding":[]}]}`))
	f.Add([]byte(`{"data":null}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, body []byte) {
		e, err := NewEmbedder(provider.Config{BaseURL: "http://embed.test/v1", HTTPClient: &http.Client{Transport: roundTrip(body)},
			Policy: providertest.Once})
		if err != nil {
			t.Fatal(err)
		}
		vecs, err := e.Embed(context.Background(), []string{"a", "b"})
		if err != nil {
			var fe *failure.Error
			if !errors.As(err, &fe) {
				t.Fatalf("err %v (%T) is not a *failure.Error", err, err)
			}
			return
		}
		if len(vecs) != 2 || len(vecs[0]) == 0 || len(vecs[0]) != len(vecs[1]) {
			t.Fatalf("vectors %v", vecs)
		}
	})
}
