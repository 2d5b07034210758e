package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/wire"
)

// anthropicEvent is one event of a Messages API stream: message_start,
// content_block_start, content_block_delta, content_block_stop,
// message_delta, message_stop, ping or error.
type anthropicEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message *struct {
		ID    string         `json:"id"`
		Model string         `json:"model"`
		Usage anthropicUsage `json:"usage"`
	} `json:"message"`
	ContentBlock json.RawMessage `json:"content_block"`
	Delta        *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *anthropicUsage `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// anthropicStream assembles a Messages API stream into a Response,
// calling onText with every text delta (and every input delta of the tool
// an answer is forced through: answer, "" for none). Thinking deltas
// build the Reasoning and never reach onText.
type anthropicStream struct {
	onText  func(string)
	answer  string
	parser  wire.SSEParser
	blocks  []*anthropicStreamBlock
	byIndex map[int]*anthropicStreamBlock
	stop    string
	id      string // the message's id and model (message_start)
	model   string
	usage   anthropicUsage
	started bool
	stopped bool
	bad     int // events that were not valid JSON
	errType string
	errMsg  string
}

type anthropicStreamBlock struct {
	block     anthropicBlock
	text      strings.Builder // a text block's text, a thinking block's thinking
	json      strings.Builder
	signature strings.Builder
}

func newAnthropicStream(onText func(string), answer string) *anthropicStream {
	s := &anthropicStream{onText: onText, answer: answer, byIndex: map[int]*anthropicStreamBlock{}}
	s.parser.Emit = s.event
	return s
}

func (s *anthropicStream) event(ev wire.SSEEvent) {
	var e anthropicEvent
	if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
		s.bad++
		return
	}
	if e.Type == "" {
		e.Type = ev.Name
	}
	switch e.Type {
	case "message_start":
		s.started = true
		if e.Message != nil {
			s.id, s.model = e.Message.ID, e.Message.Model
			s.usage = e.Message.Usage
		}
	case "content_block_start":
		b := &anthropicStreamBlock{}
		if len(e.ContentBlock) > 0 && json.Unmarshal(e.ContentBlock, &b.block) == nil {
			switch {
			case isThinking(b.block.Type):
				// Assembled from its deltas; a redacted block comes whole.
				b.text.WriteString(b.block.Thinking)
				b.signature.WriteString(b.block.Signature)
				if b.block.Type == "redacted_thinking" {
					b.block.raw = e.ContentBlock
				}
			case isProviderBlock(b.block.Type):
				b.block.raw = e.ContentBlock
			}
			if b.block.Type == "text" && b.block.Text != "" {
				b.text.WriteString(b.block.Text)
				if s.onText != nil {
					s.onText(b.block.Text)
				}
			}
		}
		s.byIndex[e.Index] = b
		s.blocks = append(s.blocks, b)
	case "content_block_delta":
		b := s.byIndex[e.Index]
		if b == nil || e.Delta == nil {
			return
		}
		switch e.Delta.Type {
		case "text_delta":
			if b.block.Type != "text" {
				return
			}
			b.text.WriteString(e.Delta.Text)
			if e.Delta.Text != "" && s.onText != nil {
				s.onText(e.Delta.Text)
			}
		case "input_json_delta":
			b.json.WriteString(e.Delta.PartialJSON)
			if s.answer != "" && b.block.Type == "tool_use" && b.block.Name == s.answer && e.Delta.PartialJSON != "" && s.onText != nil {
				s.onText(e.Delta.PartialJSON)
			}
		case "thinking_delta":
			if b.block.Type == "thinking" {
				b.text.WriteString(e.Delta.Thinking)
			}
		case "signature_delta":
			if b.block.Type == "thinking" {
				b.signature.WriteString(e.Delta.Signature)
			}
		}
	case "content_block_stop":
		// The forced answer's input, if no delta carried it, is its start's.
		if b := s.byIndex[e.Index]; b != nil && s.answer != "" && b.block.Type == "tool_use" && b.block.Name == s.answer && b.json.Len() == 0 {
			in := string(wire.ObjectOrEmpty(b.block.Input))
			b.json.WriteString(in)
			if s.onText != nil {
				s.onText(in)
			}
		}
	case "message_delta":
		if e.Delta != nil && e.Delta.StopReason != "" {
			s.stop = e.Delta.StopReason
		}
		if u := e.Usage; u != nil {
			// message_delta usage is cumulative; input counts appear here
			// only in newer API versions.
			s.usage.OutputTokens = u.OutputTokens
			if u.InputTokens > 0 {
				s.usage.InputTokens = u.InputTokens
			}
			if u.CacheCreationInputTokens > 0 {
				s.usage.CacheCreationInputTokens = u.CacheCreationInputTokens
			}
			if u.CacheReadInputTokens > 0 {
				s.usage.CacheReadInputTokens = u.CacheReadInputTokens
			}
			if u.OutputTokensDetails != nil {
				s.usage.OutputTokensDetails = u.OutputTokensDetails
			}
		}
	case "message_stop":
		s.stopped = true
	case "error":
		s.errType, s.errMsg = "error", "error event"
		if e.Error != nil {
			s.errType, s.errMsg = e.Error.Type, e.Error.Message
		}
	}
}

// response returns the assembled answer.
func (s *anthropicStream) response() *llm.Response {
	blocks := make([]anthropicBlock, 0, len(s.blocks))
	var native []json.RawMessage
	for _, b := range s.blocks {
		blk := b.block
		switch blk.Type {
		case "text":
			blk.Text = b.text.String()
		case "tool_use":
			if b.json.Len() > 0 {
				blk.Input = json.RawMessage(b.json.String())
			}
		case "thinking":
			blk.Thinking, blk.Signature = b.text.String(), b.signature.String()
			blk.raw = thinkingBlock(blk.Thinking, blk.Signature)
		}
		if blk.raw != nil {
			native = append(native, withInput(blk.raw, b.json.String()))
		}
		blocks = append(blocks, blk)
	}
	out := responseFromBlocks(blocks, s.stop, s.usage.usage(), s.answer)
	out.Message.Provider = wire.JoinBlocks(native)
	out.ID, out.Model = s.id, s.model
	return out
}

// readStream reads a Messages API event stream to its end.
func (a *anthropicModel) readStream(ctx context.Context, body io.Reader, onText func(string), answer string) (*llm.Response, error) {
	s := newAnthropicStream(onText, answer)
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			s.parser.Feed(buf[:n])
		}
		if s.errType != "" {
			break
		}
		if errors.Is(err, io.EOF) {
			s.parser.Close()
			break
		}
		if err != nil {
			return nil, a.cls.Err(ctx, err)
		}
	}
	if s.errType != "" {
		kind := failure.Model
		switch s.errType {
		case "overloaded_error", "api_error", "rate_limit_error", "timeout_error":
			kind = failure.Transient
		case "authentication_error", "permission_error":
			kind = failure.PermissionDenied
		}
		return nil, &failure.Error{Kind: kind, Source: failure.SourceModel, Name: a.name, Op: "generate",
			Retryable: kind == failure.Transient,
			Message:   "the model provider failed while streaming (" + s.errType + "): " + a.cls.Scrub.Scrub(s.errMsg)}
	}
	if !s.started || !s.stopped {
		// A stream cut short (a dropped connection, a proxy timeout) may
		// succeed when asked again.
		return nil, &failure.Error{Kind: failure.Transient, Source: failure.SourceModel, Name: a.name, Op: "generate",
			Retryable: true, Message: "the model provider's stream ended before message_stop"}
	}
	return s.response(), nil
}

// withInput returns a streamed server tool block with the input its
// input_json_delta events assembled (the block's start has an empty one).
func withInput(raw json.RawMessage, input string) json.RawMessage {
	if input == "" || !json.Valid([]byte(input)) {
		return raw
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	m["input"] = json.RawMessage(input)
	out, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return out
}
