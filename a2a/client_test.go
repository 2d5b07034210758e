package a2a

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/agent/failure"
)

func TestDelegateToOwnServer(t *testing.T) {
	_, hs := newWorker(t, ServerConfig{})
	tests := []struct {
		name string
		peer Peer
		in   string
		want string
	}{
		{"jsonrpc streaming echo", Peer{Name: "w", URL: hs.URL}, "hello there", "echo: hello there"},
		{"jsonrpc streaming tool", Peer{Name: "w", URL: hs.URL}, "research go", "done: notes on go"},
		{"rest streaming", Peer{Name: "w", URL: hs.URL, PreferREST: true}, "research nats", "done: notes on nats"},
		{"jsonrpc blocking", Peer{Name: "w", URL: hs.URL, NoStreaming: true}, "hi", "echo: hi"},
		{"rest blocking", Peer{Name: "w", URL: hs.URL, NoStreaming: true, PreferREST: true}, "research a2a", "done: notes on a2a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := ctxT(t)
			ts, err := NewToolset(ctx, ToolsetConfig{Peers: []Peer{tc.peer}})
			if err != nil {
				t.Fatal(err)
			}
			defer ts.Close()
			tools, _ := ts.Tools(ctx)
			if len(tools) != 1 || tools[0].Spec().Name != "a2a__w" || tools[0].Spec().Source.Kind != "a2a" {
				t.Fatalf("tools = %+v", tools)
			}
			args, _ := json.Marshal(map[string]string{"message": tc.in})
			res, err := tools[0].Call(ctx, args)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(res.Text(), tc.want) || !strings.Contains(res.Text(), "context_id") {
				t.Fatalf("result %q does not contain %q", res.Text(), tc.want)
			}
		})
	}
}

func TestDelegateMalformedArgs(t *testing.T) {
	_, hs := newWorker(t, ServerConfig{})
	ctx := ctxT(t)
	ts, err := NewToolset(ctx, ToolsetConfig{Peers: []Peer{{Name: "w", URL: hs.URL}}})
	if err != nil {
		t.Fatal(err)
	}
	tools, _ := ts.Tools(ctx)
	res, err := tools[0].Call(ctx, json.RawMessage(`{"message": ""}`))
	if err != nil || !res.IsError {
		t.Fatalf("want an error result, got %v %v", res, err)
	}
	var fe *failure.Error
	_ = errors.As(err, &fe)
}
