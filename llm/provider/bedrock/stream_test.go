package bedrock

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
)

// bodyTransport answers every request with a ConverseStream response
// whose body is the bytes it holds: the fuzzer's input reaches the SDK's
// event-stream decoder and our assembly as it would from the network.
type bodyTransport struct{ body atomic.Pointer[[]byte] }

func (t *bodyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	b := *t.body.Load()
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	return &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/vnd.amazon.eventstream"}},
		Body:   io.NopCloser(bytes.NewReader(b)), ContentLength: int64(len(b)), Request: r}, nil
}

// FuzzConverseStream feeds arbitrary bytes to the stream path: frames
// decoded from them must never panic, and what they decode to is a
// consistent answer (the text kept is the text streamed; every call has
// JSON arguments; the reasoning kept is JSON; the answer can be sent
// back) or a classified failure.
func FuzzConverseStream(f *testing.F) {
	for _, name := range []string{"stream_tools.events", "stream_answer.events", "stream_thinking.events", "stream_error.events"} {
		f.Add(encodeFrames(eventsFixture(f, name)), name == "stream_answer.events")
	}
	f.Add(encodeFrames([]frame{{typ: "contentBlockDelta", payload: `{"contentBlockIndex":-7,"delta":{"toolUse":{"input":"{"}}}`},
		{typ: "contentBlockStart", payload: `{"contentBlockIndex":-7,"start":{"toolUse":{"name":"forecast"}}}`},
		{typ: "messageStop", payload: `{"stopReason":"end_turn"}`}}), true)
	f.Add(encodeFrames([]frame{{typ: "contentBlockDelta", payload: `{"contentBlockIndex":0,"delta":{"reasoningContent":{"redactedContent":"!!"}}}`},
		{typ: "unknownEvent", payload: `{}`}, {typ: "messageStop", payload: `{}`}}), false)
	f.Add([]byte("\x00\x00\x00\x10\x00\x00\x00\x00garbage!"), false)
	// One model for all inputs (inputs run one at a time in a process).
	tr := &bodyTransport{}
	m, err := New(provider.Config{Region: "us-east-1", BaseURL: "https://bedrock.test", Model: claudeID,
		HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in []byte, structured bool) {
		tr.body.Store(&in)
		var streamed strings.Builder
		req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}},
			OnText: func(d string) { streamed.WriteString(d) }}
		if structured {
			req.Output = &llm.Output{Name: "forecast", Schema: json.RawMessage(`{"type":"object"}`)}
		}
		out, err := m.Generate(t.Context(), req)
		if err != nil {
			var fe *failure.Error
			if !errors.As(err, &fe) || fe.Source != failure.SourceModel {
				t.Fatalf("unclassified failure %T: %v", err, err)
			}
			return
		}
		if !structured && out.Message.Text != streamed.String() {
			t.Fatalf("kept %q, streamed %q", out.Message.Text, streamed.String())
		}
		for _, c := range out.Message.ToolCalls {
			if len(c.Args) == 0 {
				t.Fatalf("call %+v has no args", c)
			}
		}
		if p := out.Message.Provider; p != nil && !json.Valid(p) {
			t.Fatalf("provider blocks are not JSON: %q", p)
		}
		if _, err := m.(*model).converseInput(&llm.Request{Messages: []llm.Message{req.Messages[0], out.Message}}); err != nil {
			t.Fatalf("the answer cannot be sent back: %v", err)
		}
	})
}
