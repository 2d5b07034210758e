package gemini

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/providertest"
)

func TestEmbedder(t *testing.T) {
	const key = providertest.GeminiKey
	js := func(status int, body string) providertest.Reply {
		return providertest.Reply{Status: status, ContentType: "application/json", Body: []byte(body)}
	}
	cases := []struct {
		name      string
		reply     providertest.Reply
		want      [][]float32
		kind      failure.Kind
		retryable bool
	}{
		{name: "ok", reply: js(200, `{"embeddings":[{"values":[0.25,-1]},{"values":[0,1.5]}]}`),
			want: [][]float32{{0.25, -1}, {0, 1.5}}},
		{name: "quota", reply: js(429, `{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED"}}`),
			kind: failure.Transient, retryable: true},
		{name: "internal", reply: js(500, `{"error":{"code":500,"message":"An internal error has occurred","status":"INTERNAL"}}`),
			kind: failure.Transient, retryable: true},
		{name: "bad key", reply: js(400, `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT",`+
			`"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}]}}`), kind: failure.PermissionDenied},
		{name: "not json", reply: js(200, `{"embeddings":[{"values":[1`), kind: failure.Protocol},
		{name: "too few", reply: js(200, `{"embeddings":[{"values":[1,2]}]}`), kind: failure.Protocol},
		{name: "ragged", reply: js(200, `{"embeddings":[{"values":[1,2]},{"values":[1]}]}`), kind: failure.Protocol},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := providertest.NewServer(t, c.reply)
			e, err := NewEmbedder(provider.Config{APIKey: key, BaseURL: srv.URL, Policy: providertest.Once})
			if err != nil {
				t.Fatal(err)
			}
			if e.Name() != "gemini/gemini-embedding-001" {
				t.Errorf("name = %q", e.Name())
			}
			got, err := e.Embed(context.Background(), []string{"delete a file", "erase a file"})
			reqs := srv.Requests()
			if len(reqs) != 1 || reqs[0].Path != "/v1beta/models/gemini-embedding-001:batchEmbedContents" || reqs[0].Header.Get("x-goog-api-key") != key {
				t.Fatalf("requests = %+v", reqs)
			}
			providertest.JSONEqual(t, "request", reqs[0].Raw, `{"requests":[`+
				`{"model":"models/gemini-embedding-001","content":{"parts":[{"text":"delete a file"}]}},`+
				`{"model":"models/gemini-embedding-001","content":{"parts":[{"text":"erase a file"}]}}]}`)
			if c.kind == failure.Unknown {
				if err != nil || !reflect.DeepEqual(got, c.want) {
					t.Fatalf("Embed = %v, %v; want %v", got, err, c.want)
				}
				return
			}
			providertest.CheckFailure(t, err, c.kind, c.retryable, "gemini/gemini-embedding-001", key)
			if fe := failure.From(err); fe.Op != "embed" {
				t.Errorf("op = %q, want embed", fe.Op)
			}
		})
	}
}

// TestEmbedderBatches: more texts than one call takes go in several
// calls, the vectors in order.
func TestEmbedderBatches(t *testing.T) {
	body := `{"embeddings":[` + repeat(`{"values":[1,0]}`, embedBatch) + `]}`
	srv := providertest.NewServer(t,
		providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte(body)},
		providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte(`{"embeddings":[{"values":[0,1]}]}`)})
	e, err := NewEmbedder(provider.Config{APIKey: providertest.GeminiKey, BaseURL: srv.URL, Policy: providertest.Once})
	if err != nil {
		t.Fatal(err)
	}
	texts := make([]string, embedBatch+1)
	for i := range texts {
		texts[i] = "t"
	}
	got, err := e.Embed(t.Context(), texts)
	if err != nil || len(got) != embedBatch+1 || got[embedBatch][1] != 1 || len(srv.Requests()) != 2 {
		t.Fatalf("Embed = %d vectors, %v; %d requests", len(got), err, len(srv.Requests()))
	}
	if _, err := NewEmbedder(provider.Config{}); !errors.Is(err, failure.Config) {
		t.Errorf("no key: err = %v, want a Config failure", err)
	}
}

func repeat(s string, n int) string {
	out := s
	for range n - 1 {
		out += "," + s
	}
	return out
}
