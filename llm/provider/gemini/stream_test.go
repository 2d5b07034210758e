package gemini

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/providertest"
)

// FuzzStream feeds the stream assembler arbitrary bytes: it never panics,
// the text it keeps is the text it streamed, every call has arguments, and
// the answer can be sent back.
func FuzzStream(f *testing.F) {
	f.Add(providertest.Fixture(f, "gemini_stream_tools.sse"))
	f.Add(providertest.Fixture(f, "gemini_stream_thinking.sse"))
	f.Add([]byte("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\",\"thoughtSignature\":\"s\"},{\"text\":\"b\"},{\"functionCall\":{\"name\":\"n\",\"args\":null}}]},\"finishReason\":\"STOP\"}]}\n\n"))
	f.Add([]byte("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"x\",\"executableCode\":{}},{\"text\":1}]}}]}\n\ndata: {\"error\":{\"code\":\"x\"}}\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		var streamed strings.Builder
		s := newStream(func(d string) { streamed.WriteString(d) })
		s.parser.Feed(in)
		s.parser.Close()
		out := decodeParts(s.assembled(), callSeed{turn: 1})
		if out.Text != streamed.String() {
			t.Fatalf("kept %q, streamed %q", out.Text, streamed.String())
		}
		checkAnswer(t, out)
	})
}

// FuzzAnswer decodes arbitrary answer bodies: never a panic, and any
// answer decoded can be sent back.
func FuzzAnswer(f *testing.F) {
	for _, name := range []string{"gemini_tools.json", "gemini_thinking.json", "gemini_structured.json", "gemini_blocked.json", "gemini_safety.json"} {
		f.Add(providertest.Fixture(f, name))
	}
	f.Add([]byte(`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"a","args":[1]}},{"thought":true,"text":"t"}]}}]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		var res gmResponse
		if json.Unmarshal(in, &res) != nil || len(res.Candidates) == 0 {
			return
		}
		checkAnswer(t, decodeParts(res.Candidates[0].Content.Parts, callSeed{response: res.ResponseID}))
	})
}

func checkAnswer(t *testing.T, out llm.Message) {
	t.Helper()
	for _, c := range out.ToolCalls {
		if len(c.Args) == 0 || c.ID == "" {
			t.Fatalf("call %+v has no args or id", c)
		}
	}
	if p := out.Provider; p != nil && (!json.Valid(p) || storedParts(p) == nil) {
		t.Fatalf("kept parts are not readable: %q", p)
	}
	body, err := json.Marshal(contents([]llm.Message{{Role: llm.RoleUser, Text: "q"}, out}, generationOf("gemini-2.5-flash")))
	if err != nil || !json.Valid(body) {
		t.Fatalf("the answer cannot be sent back: %v", err)
	}
}
