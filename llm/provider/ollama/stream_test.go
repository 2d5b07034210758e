package ollama

import (
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/llm/provider/internal/providertest"
)

// FuzzOllamaStream feeds arbitrary bytes, split at an arbitrary point, to
// the NDJSON stream assembler: it must not panic, the text it streams must
// be the text it keeps, and every tool call it returns must have an id and
// non-empty Args (a malformed argument string is kept for the agent to
// report).
func FuzzOllamaStream(f *testing.F) {
	f.Add(providertest.Fixture(f, "ollama_stream_tools.ndjson"), 40)
	f.Add(providertest.Fixture(f, "ollama_stream_structured.ndjson"), 3)
	f.Add([]byte("{\"message\":{\"tool_calls\":[{\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":1}\"}},{\"function\":{\"arguments\":[1]}}]}}\n{\"done\":true}"), 7)
	f.Add([]byte("{\"error\":\"boom\"}\n{\"message\":{\"content\":\"late\"}}\n"), 0)
	f.Fuzz(func(t *testing.T, in []byte, cut int) {
		var streamed strings.Builder
		s := newStream(func(d string) { streamed.WriteString(d) })
		if cut < 0 || cut > len(in) {
			cut = len(in) / 2
		}
		s.feed(in[:cut])
		s.feed(in[cut:])
		s.close()
		out := s.response()
		if out.Message.Text != streamed.String() {
			t.Fatalf("kept %q, streamed %q", out.Message.Text, streamed.String())
		}
		for _, c := range out.Message.ToolCalls {
			if c.ID == "" || len(c.Args) == 0 {
				t.Fatalf("call %+v", c)
			}
		}
	})
}

// TestStreamLineBound: a line longer than maxLine is dropped whole, and the
// lines after it are read.
func TestStreamLineBound(t *testing.T) {
	s := newStream(nil)
	long := "{\"message\":{\"content\":\"" + strings.Repeat("x", maxLine) + "\"}}\n"
	for i := 0; i < len(long); i += 1 << 20 {
		s.feed([]byte(long[i:min(i+1<<20, len(long))]))
	}
	s.feed([]byte("{\"message\":{\"content\":\"ok\"},\"done\":true}\n"))
	if got := s.response().Message.Text; got != "ok" || !s.done {
		t.Errorf("text %q (%d bytes), done %v", got[:min(len(got), 20)], len(got), s.done)
	}
}
