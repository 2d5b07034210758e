package bedrock

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/wire"
)

// providerBlock is a content block kept in Message.Provider and sent back
// with the conversation: a reasoningContent block, in Converse's JSON.
type providerBlock struct {
	ReasoningContent *reasoningJSON `json:"reasoningContent,omitempty"`
}

type reasoningJSON struct {
	ReasoningText *struct {
		Text      string `json:"text"`
		Signature string `json:"signature,omitempty"`
	} `json:"reasoningText,omitempty"`
	RedactedContent []byte `json:"redactedContent,omitempty"`
}

// reasoningBlocks are the reasoningContent blocks of an assistant
// message's Provider field, to send back first in the message; anything
// else there (another provider's blocks) is left out.
func reasoningBlocks(raw json.RawMessage) []types.ContentBlock {
	if len(raw) == 0 {
		return nil
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil
	}
	var out []types.ContentBlock
	for _, item := range list {
		var b providerBlock
		if json.Unmarshal(item, &b) != nil || b.ReasoningContent == nil {
			continue
		}
		switch r := b.ReasoningContent; {
		case r.ReasoningText != nil:
			out = append(out, &types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberReasoningText{
				Value: types.ReasoningTextBlock{Text: aws.String(r.ReasoningText.Text), Signature: nonEmpty(r.ReasoningText.Signature)}}})
		case len(r.RedactedContent) > 0:
			out = append(out, &types.ContentBlockMemberReasoningContent{Value: &types.ReasoningContentBlockMemberRedactedContent{
				Value: r.RedactedContent}})
		}
	}
	return out
}

// blockKind is what an answer's content block holds.
type blockKind int

const (
	kindText blockKind = iota + 1
	kindTool
	kindReasoning
)

// block is one content block of an answer as it is assembled.
type block struct {
	kind      blockKind
	text      strings.Builder // text, or reasoning text
	id, name  string          // a toolUse's
	input     strings.Builder // a toolUse's input JSON
	signature string
	redacted  []byte
}

// assembler builds a Response from an answer's content blocks, whole
// (Converse) or in events (ConverseStream).
type assembler struct {
	answerTool string
	onText     func(string)
	blocks     map[int32]*block
	// answerAt is the index of the block that calls the answer tool
	// first (hasAnswer false: none yet); a second call is a tool call the
	// agent answers as unknown.
	answerAt  int32
	hasAnswer bool
	stop      string
	stopped   bool
	u         llm.Usage
}

func newAssembler(in *converseInput, onText func(string)) *assembler {
	return &assembler{answerTool: in.answerTool, onText: onText, blocks: map[int32]*block{}}
}

// tool records the start of a toolUse block.
func (a *assembler) tool(i int32, id, name string) *block {
	b := a.at(i, kindTool)
	if b.kind != kindTool {
		return b
	}
	b.id, b.name = id, name
	if a.answerTool != "" && name == a.answerTool && !a.hasAnswer {
		a.answerAt, a.hasAnswer = i, true
	}
	return b
}

// at returns the block of index i, made of kind k if it is new.
func (a *assembler) at(i int32, k blockKind) *block {
	b := a.blocks[i]
	if b == nil {
		b = &block{kind: k}
		a.blocks[i] = b
	}
	return b
}

// block adds a whole content block of a Converse answer.
func (a *assembler) block(i int32, cb types.ContentBlock) {
	switch v := cb.(type) {
	case *types.ContentBlockMemberText:
		a.at(i, kindText).text.WriteString(v.Value)
	case *types.ContentBlockMemberToolUse:
		b := a.tool(i, aws.ToString(v.Value.ToolUseId), aws.ToString(v.Value.Name))
		if b.kind == kindTool {
			b.input.Write(fromDocument(v.Value.Input))
		}
	case *types.ContentBlockMemberReasoningContent:
		b := a.at(i, kindReasoning)
		switch r := v.Value.(type) {
		case *types.ReasoningContentBlockMemberReasoningText:
			b.text.WriteString(aws.ToString(r.Value.Text))
			b.signature = aws.ToString(r.Value.Signature)
		case *types.ReasoningContentBlockMemberRedactedContent:
			b.redacted = append(b.redacted, r.Value...)
		}
	}
}

// event adds one event of a ConverseStream answer.
func (a *assembler) event(ev types.ConverseStreamOutput) {
	switch v := ev.(type) {
	case *types.ConverseStreamOutputMemberContentBlockStart:
		if tu, ok := v.Value.Start.(*types.ContentBlockStartMemberToolUse); ok {
			a.tool(aws.ToInt32(v.Value.ContentBlockIndex), aws.ToString(tu.Value.ToolUseId), aws.ToString(tu.Value.Name))
		}
	case *types.ConverseStreamOutputMemberContentBlockDelta:
		i := aws.ToInt32(v.Value.ContentBlockIndex)
		switch d := v.Value.Delta.(type) {
		case *types.ContentBlockDeltaMemberText:
			if b := a.at(i, kindText); b.kind == kindText && d.Value != "" {
				b.text.WriteString(d.Value)
				a.onText(d.Value)
			}
		case *types.ContentBlockDeltaMemberToolUse:
			b := a.at(i, kindTool)
			if in := aws.ToString(d.Value.Input); b.kind == kindTool && in != "" {
				b.input.WriteString(in)
				if a.hasAnswer && a.answerAt == i {
					a.onText(in)
				}
			}
		case *types.ContentBlockDeltaMemberReasoningContent:
			b := a.at(i, kindReasoning)
			if b.kind != kindReasoning {
				return
			}
			switch r := d.Value.(type) {
			case *types.ReasoningContentBlockDeltaMemberText:
				b.text.WriteString(r.Value)
			case *types.ReasoningContentBlockDeltaMemberSignature:
				b.signature += r.Value
			case *types.ReasoningContentBlockDeltaMemberRedactedContent:
				b.redacted = append(b.redacted, r.Value...)
			}
		}
	case *types.ConverseStreamOutputMemberMessageStop:
		a.stop, a.stopped = string(v.Value.StopReason), true
	case *types.ConverseStreamOutputMemberMetadata:
		a.usage(v.Value.Usage)
	}
}

func (a *assembler) order() []int32 {
	idx := make([]int32, 0, len(a.blocks))
	for i := range a.blocks {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(x, y int) bool { return idx[x] < idx[y] })
	return idx
}

// usage converts Bedrock's usage, whose inputTokens leaves out the tokens
// read from and written to the cache, to llm's convention.
func (a *assembler) usage(u *types.TokenUsage) {
	if u == nil {
		return
	}
	read, write := int(aws.ToInt32(u.CacheReadInputTokens)), int(aws.ToInt32(u.CacheWriteInputTokens))
	a.u = llm.Usage{InputTokens: int(aws.ToInt32(u.InputTokens)) + read + write, OutputTokens: int(aws.ToInt32(u.OutputTokens)),
		CacheReadTokens: read, CacheWriteTokens: write}
}

// response is the assembled answer: text blocks joined, toolUse blocks as
// tool calls in order (the answer tool's input as the text instead),
// reasoning text joined and its blocks kept in Provider.
func (a *assembler) response() *llm.Response {
	out := &llm.Response{Message: llm.Message{Role: llm.RoleAssistant}, StopReason: a.stop, Usage: a.u}
	var text, reasoning strings.Builder
	var native []json.RawMessage
	for _, i := range a.order() {
		b := a.blocks[i]
		switch b.kind {
		case kindText:
			text.WriteString(b.text.String())
		case kindTool:
			args := wire.NormalizeArgs(b.input.String())
			if a.hasAnswer && a.answerAt == i {
				out.Message.Text = compact(args)
				continue
			}
			out.Message.ToolCalls = append(out.Message.ToolCalls, llm.ToolCall{ID: b.id, Name: b.name, Args: args})
		case kindReasoning:
			r := &reasoningJSON{}
			if len(b.redacted) > 0 {
				r.RedactedContent = b.redacted
			} else {
				r.ReasoningText = &struct {
					Text      string `json:"text"`
					Signature string `json:"signature,omitempty"`
				}{b.text.String(), b.signature}
				reasoning.WriteString(b.text.String())
			}
			raw, err := json.Marshal(providerBlock{ReasoningContent: r})
			if err == nil {
				native = append(native, raw)
			}
		}
	}
	if !a.hasAnswer {
		out.Message.Text = text.String()
	}
	out.Message.Reasoning = reasoning.String()
	out.Message.Provider = wire.JoinBlocks(native)
	return out
}

// compact is the answer's JSON without insignificant space, or as the
// model wrote it when it is not JSON (the caller reports that).
func compact(args json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, args) != nil {
		return string(args)
	}
	return buf.String()
}
