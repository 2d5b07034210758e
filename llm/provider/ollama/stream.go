package ollama

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/wire"
)

// maxLine bounds one line of a streamed answer (and so the memory a server
// that never sends a newline can make us hold); a longer line is dropped.
const maxLine = 8 << 20

// stream assembles Ollama's answer: each line of newline-delimited JSON (or
// the one object of an answer not streamed) is a chatResponse whose
// message carries a piece of the text, of the thinking, or whole tool
// calls; the last one says done and carries the counts. Text goes to
// onText as it comes, until finish. It is fed and read by one goroutine.
type stream struct {
	onText  func(string)
	buf     []byte
	tooLong bool
	text    strings.Builder
	think   strings.Builder
	calls   []llm.ToolCall
	model   string
	stop    string
	usage   llm.Usage
	done    bool // the last line came
	over    bool // the caller's turn is over: no more onText
	errMsg  string
}

func newStream(onText func(string)) *stream { return &stream{onText: onText} }

// feed parses bytes of the stream, in chunks of any size.
func (s *stream) feed(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(s.buf)+len(p) > maxLine {
				s.tooLong, s.buf = true, s.buf[:0]
			} else if !s.tooLong {
				s.buf = append(s.buf, p...)
			}
			return
		}
		switch {
		case s.tooLong || len(s.buf)+i > maxLine:
		case len(s.buf) > 0:
			s.line(append(s.buf, p[:i]...))
		default:
			s.line(p[:i])
		}
		s.tooLong, s.buf = false, s.buf[:0]
		p = p[i+1:]
	}
}

// close ends the stream: a last line without a newline is parsed.
func (s *stream) close() {
	if len(s.buf) > 0 && !s.tooLong {
		s.line(s.buf)
	}
	s.buf = s.buf[:0]
}

// finish stops delivering text.
func (s *stream) finish() { s.over = true }

func (s *stream) line(b []byte) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || s.done || s.errMsg != "" {
		return
	}
	var c chatResponse
	if json.Unmarshal(b, &c) != nil {
		return // a malformed line is skipped; a stream without its last line fails
	}
	s.chunk(&c)
}

// chunk adds one line's content.
func (s *stream) chunk(c *chatResponse) {
	if c.Error != "" {
		s.errMsg = c.Error
		return
	}
	if c.Model != "" {
		s.model = c.Model
	}
	s.think.WriteString(c.Message.Thinking)
	if d := c.Message.Content; d != "" {
		s.text.WriteString(d)
		if !s.over && s.onText != nil {
			s.onText(d)
		}
	}
	for _, tc := range c.Message.ToolCalls {
		id := tc.ID
		if id == "" {
			id = newCallID()
		}
		s.calls = append(s.calls, llm.ToolCall{ID: id, Name: tc.Function.Name, Args: args(tc.Function.Arguments)})
	}
	if c.Done {
		s.done, s.stop = true, c.DoneReason
		s.usage = llm.Usage{InputTokens: c.PromptEvalCount, OutputTokens: c.EvalCount}
	}
}

// args turns a call's arguments into Args: an object is kept; a string
// (some models' templates give the JSON as text) is its text; anything
// else, or nothing, is an empty object.
func args(raw json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(raw)
	if len(t) > 0 && t[0] == '"' {
		var s string
		if json.Unmarshal(t, &s) == nil {
			return wire.NormalizeArgs(s)
		}
	}
	if len(t) > 0 && t[0] == '{' && json.Valid(t) {
		return append(json.RawMessage(nil), t...)
	}
	return json.RawMessage("{}")
}

// response is the assembled answer.
func (s *stream) response() *llm.Response {
	return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Text: s.text.String(), Reasoning: s.think.String(),
		ToolCalls: s.calls}, Usage: s.usage, StopReason: s.stop, Model: s.model}
}
