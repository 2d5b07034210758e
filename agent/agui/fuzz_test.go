package agui_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/switchboard-dev/switchboard/agent/agui"
	"github.com/switchboard-dev/switchboard/failure"
)

// FuzzDecodeInput: any body decodes to an input or to an InvalidArgs
// failure, never a panic.
func FuzzDecodeInput(f *testing.F) {
	for _, s := range []string{
		`{"threadId":"t","runId":"r","messages":[{"id":"m","role":"user","content":"hi"}]}`,
		`{"threadId":"t","runId":"r","messages":[{"id":"m","role":"user","content":[{"type":"text","text":"hi"}]}],"state":{"a":1}}`,
		`{"threadId":"t","runId":"r","messages":[],"resume":[{"interruptId":"i","status":"resolved","payload":{"approved":true}}]}`,
		`{"threadId":"t","runId":"r","messages":[{"id":"a","role":"assistant","toolCalls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"id":"m","role":"tool","toolCallId":"c","content":"ok","error":"e"}],"tools":[{"name":"f","description":"d","parameters":{"type":"object"}}]}`,
		`{"threadId":"t","runId":"r","messages":[],"tools":[{"name":"f","description":"d"},{"name":"f","description":"e"}]}`,
		`{"threadId":"t","runId":"r","messages":[],"tools":[{"name":"f","description":"d","parameters":[]}]}`,
		`{"threadId":1}`, `[]`, `null`, `{} {}`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := agui.DecodeInput(bytes.NewReader(data), 4096)
		if err != nil {
			if !errors.Is(err, failure.InvalidArgs) {
				t.Fatalf("error %v is not InvalidArgs", err)
			}
			return
		}
		if in.ThreadID == "" || in.RunID == "" {
			t.Fatalf("decoded an input without ids: %+v", in)
		}
		for _, m := range in.Messages {
			_ = m.Text()
		}
	})
}
