package a2a

import (
	"encoding/json"
	"errors"
	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/failure"
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
			if len(tools) != 1 || tools[0].Spec().Name != "a2a__w" || tools[0].Spec().Source.Kind != failure.SourceA2A {
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

// TestAnswerStreamsInChunks: the served agent's answer streams into one
// artifact in chunks (append, lastChunk), and the client reassembles it.
func TestAnswerStreamsInChunks(t *testing.T) {
	_, hs := newWorker(t, ServerConfig{ChunkBytes: 8})
	ctx := ctxT(t)
	c := clientFor(t, hs.URL, "JSONRPC", nil)
	in := "a long enough sentence to need several chunks"
	var chunks []*a2ago.TaskArtifactUpdateEvent
	for ev, err := range c.SendStreamingMessage(ctx, textMsg(in)) {
		if err != nil {
			t.Fatal(err)
		}
		if a, ok := ev.(*a2ago.TaskArtifactUpdateEvent); ok {
			chunks = append(chunks, a)
		}
	}
	if len(chunks) < 3 || chunks[0].Append || !chunks[len(chunks)-1].LastChunk {
		t.Fatalf("chunks = %d, first append %v", len(chunks), chunks[0].Append)
	}
	var text strings.Builder
	for i, ch := range chunks {
		if i > 0 && (!ch.Append || ch.Artifact.ID != chunks[0].Artifact.ID) {
			t.Fatalf("chunk %d not appended to the same artifact", i)
		}
		text.WriteString(partsText(ch.Artifact))
	}
	if text.String() != "echo: "+in {
		t.Fatalf("assembled %q", text.String())
	}
	// Our client folds the chunks into the same text.
	ts, err := NewToolset(ctx, ToolsetConfig{Peers: []Peer{{Name: "w", URL: hs.URL}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	tools, _ := ts.Tools(ctx)
	res, err := tools[0].Call(ctx, json.RawMessage(`{"message":"`+in+`"}`))
	if err != nil || !strings.HasPrefix(res.Text(), "echo: "+in+"\n") {
		t.Fatalf("%q %v", res.Text(), err)
	}
	// With a tool call first, the answer comes from the second turn.
	res, err = tools[0].Call(ctx, json.RawMessage(`{"message":"research chunking"}`))
	if err != nil || !strings.HasPrefix(res.Text(), "done: notes on chunking") {
		t.Fatalf("%q %v", res.Text(), err)
	}
}
