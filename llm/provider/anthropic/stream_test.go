package anthropic

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/providertest"
)

// FuzzAnthropicStream does the same for the Anthropic stream assembler.
func FuzzAnthropicStream(f *testing.F) {
	f.Add(providertest.Fixture(f, "anthropic_stream_tools.sse"))
	f.Add(providertest.Fixture(f, "anthropic_stream_search.sse"))
	f.Add(providertest.Fixture(f, "anthropic_stream_thinking.sse"))
	f.Add(providertest.Fixture(f, "anthropic_stream_cache.sse"))
	f.Add([]byte("data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"a\"}}\n\n" +
		"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"not text\"}}\n\n" +
		"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"s\"}}\n\n"))
	f.Add([]byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":5,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n"))
	f.Add([]byte("data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"n\",\"input\":null}}\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		var streamed strings.Builder
		s := newAnthropicStream(func(d string) { streamed.WriteString(d) }, "")
		s.parser.Feed(in)
		s.parser.Close()
		out := s.response()
		if out.Message.Text != streamed.String() {
			t.Fatalf("kept %q, streamed %q", out.Message.Text, streamed.String())
		}
		if r := out.Message.Reasoning; r != "" && strings.Contains(streamed.String(), r) {
			t.Fatalf("thinking %q reached OnText", r)
		}
		for _, c := range out.Message.ToolCalls {
			if len(c.Args) == 0 {
				t.Fatalf("call %+v has no args", c)
			}
		}
		if p := out.Message.Provider; p != nil && !json.Valid(p) {
			t.Fatalf("provider blocks are not JSON: %q", p)
		}
		if _, err := json.Marshal(anthropicMessages([]llm.Message{out.Message})); err != nil {
			t.Fatalf("the answer cannot be sent back: %v", err)
		}
	})
}
