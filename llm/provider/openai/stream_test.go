package openai

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/providertest"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/wire"
)

// FuzzOpenAIStream feeds arbitrary bytes to the OpenAI stream assembler: it
// must not panic, the text it streams must be the text it keeps, and every
// tool call it returns must have non-empty Args.
func FuzzOpenAIStream(f *testing.F) {
	f.Add(providertest.Fixture(f, "openai_stream_tools.sse"))
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":\"x\"}}]}}]}\n\n"))
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":-1,\"id\":\"a\"},{\"id\":\"b\"},{\"id\":\"b\"}]}}]}\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		var streamed strings.Builder
		s := newOpenAIStream(func(d string) { streamed.WriteString(d) })
		s.feed(in)
		s.close()
		out := &llm.Response{}
		s.apply(out)
		if out.Message.Text != streamed.String() {
			t.Fatalf("kept %q, streamed %q", out.Message.Text, streamed.String())
		}
		for _, c := range out.Message.ToolCalls {
			if len(c.Args) == 0 {
				t.Fatalf("call %+v has no args", c)
			}
		}
	})
}

// BenchmarkOpenAIStreamAssembly measures parsing and assembling a whole
// streamed turn (text, two interleaved tool calls, usage) against only
// JSON-decoding its chunks, the floor any assembler pays, and reports the
// ratio.
func BenchmarkOpenAIStreamAssembly(b *testing.B) {
	stream := providertest.Fixture(b, "openai_stream_tools.sse")
	var datas [][]byte
	var events []wire.SSEEvent
	p := wire.SSEParser{Emit: func(e wire.SSEEvent) { events = append(events, e) }}
	p.Feed(stream)
	p.Close()
	for _, e := range events {
		if e.Data != "[DONE]" {
			datas = append(datas, []byte(e.Data))
		}
	}
	providertest.CompareBench(b, "decode", func() {
		for _, d := range datas {
			var c openAIChunk
			if err := json.Unmarshal(d, &c); err != nil {
				b.Fatal(err)
			}
		}
	}, "assemble", func() {
		s := newOpenAIStream(func(string) {})
		s.feed(stream)
		s.close()
		out := &llm.Response{}
		s.apply(out)
		if len(out.Message.ToolCalls) != 2 {
			b.Fatal(fmt.Sprint(out.Message.ToolCalls))
		}
	})
}
