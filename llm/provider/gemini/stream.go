package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/wire"
)

// gmStream assembles a streamGenerateContent?alt=sse stream: every event is
// a GenerateContentResponse holding the parts that are new since the last
// one; the last has the finishReason, and usageMetadata (cumulative) comes
// with any of them.
type gmStream struct {
	onText   func(string)
	parser   wire.SSEParser
	parts    []streamPart
	finish   string
	usage    *gmUsage
	block    *gmPromptFeedback
	model    string
	id       string
	chunks   int // events that were valid responses
	cands    int // events with a candidate
	bad      int // events that were not valid JSON
	apiErr   *apiError
	finished bool
}

// streamPart is a part being assembled: consecutive unsigned text chunks
// of one kind (thought or not) join into one part; a signed part, or any
// other, is kept as it came.
type streamPart struct {
	raw  json.RawMessage // a non-text part, as received
	text *gmPart         // a text part being joined
}

func newStream(onText func(string)) *gmStream {
	s := &gmStream{onText: onText}
	s.parser.Emit = s.event
	return s
}

func (s *gmStream) event(ev wire.SSEEvent) {
	if s.apiErr != nil || s.block != nil {
		return
	}
	var r gmResponse
	if err := json.Unmarshal([]byte(ev.Data), &r); err != nil {
		s.bad++
		return
	}
	s.chunks++
	if r.Error != nil {
		s.apiErr = r.Error
		return
	}
	if r.PromptFeedback != nil && r.PromptFeedback.BlockReason != "" {
		s.block = r.PromptFeedback
	}
	if r.UsageMetadata != nil {
		s.usage = r.UsageMetadata
	}
	if r.ModelVersion != "" {
		s.model = r.ModelVersion
	}
	if r.ResponseID != "" {
		s.id = r.ResponseID
	}
	if len(r.Candidates) == 0 {
		return
	}
	s.cands++
	c := r.Candidates[0]
	for _, raw := range c.Content.Parts {
		s.add(raw)
	}
	if c.FinishReason != "" {
		s.finish, s.finished = c.FinishReason, true
	}
}

// add appends one streamed part, joining text to the text before it.
func (s *gmStream) add(raw json.RawMessage) {
	var p gmPart
	if json.Unmarshal(raw, &p) != nil {
		return
	}
	if p.FunctionCall == nil && !p.Thought && p.Text != "" && s.onText != nil {
		s.onText(p.Text) // what decodeParts takes as the answer's text
	}
	if p.FunctionCall != nil || p.FunctionResponse != nil || p.InlineData != nil || p.FileData != nil || !isTextOnly(raw) {
		s.parts = append(s.parts, streamPart{raw: raw})
		return
	}
	if n := len(s.parts); n > 0 && p.ThoughtSignature == "" {
		if last := s.parts[n-1].text; last != nil && last.Thought == p.Thought && last.ThoughtSignature == "" {
			last.Text += p.Text
			return
		}
	}
	s.parts = append(s.parts, streamPart{text: &p})
}

// isTextOnly reports whether a part has no fields but text, thought and
// thoughtSignature (so that joining it loses nothing).
func isTextOnly(raw json.RawMessage) bool {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return false
	}
	for k := range fields {
		switch k {
		case "text", "thought", "thoughtSignature":
		default:
			return false
		}
	}
	return true
}

// assembled returns the stream's parts.
func (s *gmStream) assembled() []json.RawMessage {
	out := make([]json.RawMessage, 0, len(s.parts))
	for _, p := range s.parts {
		if p.text != nil {
			out = append(out, marshalPart(*p.text))
			continue
		}
		out = append(out, p.raw)
	}
	return out
}

// readStream reads a stream to its end.
func (g *geminiModel) readStream(ctx context.Context, body io.Reader, onText func(string), seed callSeed) (*llm.Response, error) {
	s := newStream(onText)
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			s.parser.Feed(buf[:n])
		}
		if s.apiErr != nil || s.block != nil {
			break
		}
		if errors.Is(err, io.EOF) {
			s.parser.Close()
			break
		}
		if err != nil {
			return nil, g.cls.Err(ctx, err)
		}
	}
	if e := s.apiErr; e != nil {
		f := g.statusFailure(e.Code, *e)
		if e.Code == 0 {
			f = g.statusFailure(500, *e)
		}
		f.Message = "while streaming, " + f.Message
		return nil, f
	}
	if s.block == nil && !s.finished {
		if s.chunks == 0 && s.bad > 0 {
			return nil, g.protocolError("the model provider's stream holds no valid answer", nil)
		}
		// A stream cut short (a dropped connection, a proxy timeout) may
		// succeed when asked again.
		return nil, &failure.Error{Kind: failure.Transient, Source: failure.SourceModel, Name: g.name, Op: "generate",
			Retryable: true, Message: "the model provider's stream ended before a finishReason"}
	}
	return g.answer(answerOf{parts: s.assembled(), finish: s.finish, usage: s.usage, block: s.block,
		candidates: s.cands, model: s.model, id: s.id, seed: seed})
}
