package ollama

import (
	"context"
	"reflect"
	"testing"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/providertest"
)

func TestEmbedder(t *testing.T) {
	const key = providertest.OpenAIKey
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
		{name: "ok", reply: js(200, `{"model":"nomic-embed-text","embeddings":[[0.25,-1],[0,1.5]],"total_duration":1}`),
			want: [][]float32{{0.25, -1}, {0, 1.5}}},
		{name: "busy", reply: js(503, `{"error":"server busy, please try again"}`), kind: failure.Transient, retryable: true},
		{name: "rate limited", reply: js(429, `{"error":"too many requests"}`), kind: failure.Transient, retryable: true},
		{name: "no such model", reply: js(404, `{"error":"model \"nomic-embed-text\" not found, try pulling it first"}`), kind: failure.Model},
		{name: "not json", reply: js(200, `{"embeddings":[[1,`), kind: failure.Protocol},
		{name: "too few", reply: js(200, `{"embeddings":[[1,2]]}`), kind: failure.Protocol},
		{name: "empty vector", reply: js(200, `{"embeddings":[[],[]]}`), kind: failure.Protocol},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := providertest.NewServer(t, c.reply)
			e, err := NewEmbedder(provider.Config{APIKey: key, BaseURL: srv.URL, Policy: providertest.Once})
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.Embed(context.Background(), []string{"delete a file", "erase a file"})
			reqs := srv.Requests()
			if len(reqs) != 1 || reqs[0].Path != "/api/embed" || reqs[0].Header.Get("authorization") != "Bearer "+key {
				t.Fatalf("requests = %+v", reqs)
			}
			providertest.JSONEqual(t, "request", reqs[0].Raw, `{"model":"nomic-embed-text","input":["delete a file","erase a file"]}`)
			if c.kind == failure.Unknown {
				if err != nil || !reflect.DeepEqual(got, c.want) {
					t.Fatalf("Embed = %v, %v; want %v", got, err, c.want)
				}
				return
			}
			providertest.CheckFailure(t, err, c.kind, c.retryable, "ollama/nomic-embed-text", key)
			if fe := failure.From(err); fe.Op != "embed" {
				t.Errorf("op = %q, want embed", fe.Op)
			}
		})
	}
}
