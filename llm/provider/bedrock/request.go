package bedrock

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/wire"
)

// outputMessage is the member of a Converse answer that holds its message.
type outputMessage = types.ConverseOutputMemberMessage

// defaultOutputName names the answer tool of Request.Output when it has no
// name.
const defaultOutputName = "answer"

// converseInput is one request in the SDK's types, shared by Converse and
// ConverseStream.
type converseInput struct {
	modelID    string
	system     []types.SystemContentBlock
	messages   []types.Message
	tools      *types.ToolConfiguration
	inference  *types.InferenceConfiguration
	additional document.Interface
	// answerTool is the name of the tool whose input is the answer
	// (Request.Output), "" for none.
	answerTool string
}

func (in *converseInput) converse() *bedrockruntime.ConverseInput {
	return &bedrockruntime.ConverseInput{ModelId: aws.String(in.modelID), System: in.system, Messages: in.messages,
		ToolConfig: in.tools, InferenceConfig: in.inference, AdditionalModelRequestFields: in.additional}
}

func (in *converseInput) converseStream() *bedrockruntime.ConverseStreamInput {
	return &bedrockruntime.ConverseStreamInput{ModelId: aws.String(in.modelID), System: in.system, Messages: in.messages,
		ToolConfig: in.tools, InferenceConfig: in.inference, AdditionalModelRequestFields: in.additional}
}

// defaultCachePoint is a cache checkpoint of the default kind.
func defaultCachePoint() types.CachePointBlock {
	return types.CachePointBlock{Type: types.CachePointTypeDefault}
}

// converseInput builds the request.
func (m *model) converseInput(req *llm.Request) (*converseInput, error) {
	caps := m.family.capabilities()
	cache := caps.PromptCache && !req.NoCache
	in := &converseInput{modelID: m.modelID}
	if req.System != "" {
		in.system = []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: req.System}}
		if cache {
			in.system = append(in.system, &types.SystemContentBlockMemberCachePoint{Value: defaultCachePoint()})
		}
	}

	// Reasoning (Claude's extended thinking) decides the token cap and
	// whether a tool can be forced.
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = m.maxTokens
	}
	budget := 0
	if req.Reasoning != nil && caps.Reasoning {
		budget, maxTokens = thinkingBudget(*req.Reasoning, maxTokens)
	}
	if maxTokens > 0 || req.Temperature != nil || len(req.StopSequences) > 0 {
		in.inference = &types.InferenceConfiguration{StopSequences: req.StopSequences}
		if maxTokens > 0 {
			in.inference.MaxTokens = aws.Int32(int32(min(maxTokens, 1<<30)))
		}
		if req.Temperature != nil && budget == 0 {
			in.inference.Temperature = aws.Float32(float32(*req.Temperature))
		}
	}
	if budget > 0 {
		in.additional = document.NewLazyDocument(map[string]any{
			"thinking": map[string]any{"type": "enabled", "budget_tokens": budget}})
	}

	tools, err := m.toolConfig(req, cache && m.family.cachesTools(), budget > 0)
	if err != nil {
		return nil, err
	}
	in.tools = tools
	if req.Output != nil {
		in.answerTool = outputName(req.Output)
	}
	in.messages, err = m.messages(req.Messages, caps)
	if err != nil {
		return nil, err
	}
	if cache {
		placeCachePoints(in.messages)
	}
	return in, nil
}

// thinkingBudget derives Claude's thinking budget from r and the answer
// cap: at least 1024 tokens (the API's minimum) and below the cap, which
// it raises when none is set. A cap too small to leave room for both
// turns thinking off (budget 0).
func thinkingBudget(r llm.Reasoning, maxTokens int) (budget, newMax int) {
	budget = r.BudgetTokens
	if budget <= 0 {
		switch r.Effort {
		case llm.EffortMinimal:
			budget = 1024
		case llm.EffortLow:
			budget = 2048
		case llm.EffortHigh:
			budget = 16384
		default:
			budget = 8192
		}
	}
	budget = max(budget, 1024)
	if maxTokens <= 0 {
		return budget, budget + defaultAnswerTokens
	}
	if budget >= maxTokens {
		budget = maxTokens / 2
	}
	if budget < 1024 {
		return 0, maxTokens
	}
	return budget, maxTokens
}

// outputName is the answer tool's name.
func outputName(o *llm.Output) string {
	if o.Name != "" {
		return o.Name
	}
	return defaultOutputName
}

// toolConfig converts the tools, with the answer tool of req.Output last
// and a cache point after them all.
func (m *model) toolConfig(req *llm.Request, cache, thinking bool) (*types.ToolConfiguration, error) {
	if len(req.Tools) == 0 && req.Output == nil {
		return nil, nil
	}
	tc := &types.ToolConfiguration{}
	for _, t := range req.Tools {
		schema, err := toDocument(wire.ToolSchema(t.Schema))
		if err != nil {
			return nil, m.requestErr(fmt.Sprintf("the input schema of tool %q is not valid JSON", t.Name), err)
		}
		tc.Tools = append(tc.Tools, &types.ToolMemberToolSpec{Value: types.ToolSpecification{
			Name: aws.String(t.Name), Description: nonEmpty(t.Description), InputSchema: &types.ToolInputSchemaMemberJson{Value: schema}}})
	}
	if o := req.Output; o != nil {
		name := outputName(o)
		schema, err := toDocument(o.Schema)
		if err != nil {
			return nil, m.requestErr("the answer's schema (Request.Output) is not valid JSON", err)
		}
		desc := o.Description
		if desc == "" {
			desc = "Give the answer: call this tool once, with the answer as its input."
		}
		tc.Tools = append(tc.Tools, &types.ToolMemberToolSpec{Value: types.ToolSpecification{
			Name: aws.String(name), Description: aws.String(desc), InputSchema: &types.ToolInputSchemaMemberJson{Value: schema}}})
		switch {
		case thinking || !m.family.forcesTools():
			// Claude refuses forced tool use while thinking; other
			// families may not take a toolChoice at all.
		case len(req.Tools) > 0:
			tc.ToolChoice = &types.ToolChoiceMemberAny{}
		default:
			tc.ToolChoice = &types.ToolChoiceMemberTool{Value: types.SpecificToolChoice{Name: aws.String(name)}}
		}
	}
	if cache {
		tc.Tools = append(tc.Tools, &types.ToolMemberCachePoint{Value: defaultCachePoint()})
	}
	return tc, nil
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (m *model) requestErr(msg string, err error) *failure.Error {
	return &failure.Error{Kind: failure.Model, Source: failure.SourceModel, Name: m.name, Op: "generate", Message: msg, Err: err}
}

// messages converts the conversation: an assistant message becomes its
// reasoning blocks, text and toolUse blocks; a tool message one user
// message of toolResult blocks; consecutive messages of one role are
// merged, as the API requires alternating turns.
func (m *model) messages(msgs []llm.Message, caps llm.Capabilities) ([]types.Message, error) {
	out := make([]types.Message, 0, len(msgs))
	add := func(role types.ConversationRole, blocks []types.ContentBlock) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			return
		}
		out = append(out, types.Message{Role: role, Content: blocks})
	}
	docs := &docNames{}
	for _, msg := range msgs {
		var blocks []types.ContentBlock
		switch msg.Role {
		case llm.RoleAssistant:
			blocks = append(blocks, reasoningBlocks(msg.Provider)...)
			if msg.Text != "" {
				blocks = append(blocks, &types.ContentBlockMemberText{Value: msg.Text})
			}
			for _, c := range msg.ToolCalls {
				input, err := toDocument(wire.ObjectOrEmpty(c.Args))
				if err != nil {
					return nil, m.requestErr("a tool call's arguments could not be encoded", err)
				}
				blocks = append(blocks, &types.ContentBlockMemberToolUse{Value: types.ToolUseBlock{
					ToolUseId: aws.String(c.ID), Name: aws.String(c.Name), Input: input}})
			}
			add(types.ConversationRoleAssistant, blocks)
		case llm.RoleTool:
			for _, r := range msg.ToolResults {
				blocks = append(blocks, m.toolResult(r, caps, docs))
			}
			add(types.ConversationRoleUser, blocks)
		default:
			if msg.Text != "" {
				blocks = append(blocks, &types.ContentBlockMemberText{Value: msg.Text})
			}
			for _, p := range msg.Parts {
				blocks = append(blocks, contentPart(p, caps, docs))
			}
			add(types.ConversationRoleUser, blocks)
		}
	}
	return out, nil
}

// toolResult converts one tool result: its content as text (or json, for
// a JSON object), then its parts.
func (m *model) toolResult(r llm.ToolResult, caps llm.Capabilities, docs *docNames) types.ContentBlock {
	var content []types.ToolResultContentBlock
	if obj := strings.TrimSpace(r.Content); strings.HasPrefix(obj, "{") && json.Valid([]byte(obj)) {
		if d, err := toDocument(json.RawMessage(obj)); err == nil {
			content = append(content, &types.ToolResultContentBlockMemberJson{Value: d})
		}
	}
	if len(content) == 0 && (r.Content != "" || len(r.Parts) == 0) {
		text := r.Content
		if strings.TrimSpace(text) == "" {
			// The API rejects a blank text block.
			text = "(no output)"
		}
		content = append(content, &types.ToolResultContentBlockMemberText{Value: text})
	}
	for _, p := range r.Parts {
		content = append(content, resultPart(p, caps, docs))
	}
	b := types.ToolResultBlock{ToolUseId: aws.String(r.CallID), Content: content}
	if m.family.toolStatus() {
		b.Status = types.ToolResultStatusSuccess
		if r.IsError {
			b.Status = types.ToolResultStatusError
		}
	}
	return &types.ContentBlockMemberToolResult{Value: b}
}

// placeCachePoints marks the conversation's cacheable prefix: after the
// previous turn's answer (the last assistant message before the end), which
// the previous request wrote to the cache, and at the end, for the next
// request to read. With the system's and the tools', that is four: the
// API's limit.
func placeCachePoints(msgs []types.Message) {
	n := len(msgs)
	if n == 0 {
		return
	}
	mark := func(i int) {
		msgs[i].Content = append(msgs[i].Content, &types.ContentBlockMemberCachePoint{Value: defaultCachePoint()})
	}
	for i := n - 2; i >= 0; i-- {
		if msgs[i].Role == types.ConversationRoleAssistant {
			mark(i)
			break
		}
	}
	mark(n - 1)
}
