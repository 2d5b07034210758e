package provider

import (
	"encoding/json"
	"testing"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
)

// TestLangChainOverAnthropicProvider runs the generic adapter over
// langchaingo's own anthropic provider, which answers with one choice per
// content block: the adapter must join them into one turn, count usage
// once, and report the provider's failures with the taxonomy.
func TestLangChainOverAnthropicProvider(t *testing.T) {
	p := newProvider(t,
		reply{200, "application/json", fixture(t, "anthropic_messages_tools.json")},
		reply{429, "application/json", []byte(`{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`)})
	lc, err := anthropic.New(anthropic.WithToken(testAnthropicKey), anthropic.WithBaseURL(p.URL+"/v1"),
		anthropic.WithModel("claude-sonnet-4-5"), anthropic.WithHTTPClient(p.Client()))
	if err != nil {
		t.Fatal(err)
	}
	m, err := newLangChain(langChainConfig{Model: lc, Name: "langchaingo-anthropic", Secrets: []string{testAnthropicKey}})
	if err != nil {
		t.Fatal(err)
	}
	req := &llm.Request{Tools: weatherTools(), MaxTokens: 100, Messages: []llm.Message{{Role: llm.RoleUser, Text: "weather?"}}}
	resp, err := m.Generate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Text != "Let me check both cities." {
		t.Errorf("text = %q", resp.Message.Text)
	}
	if len(resp.Message.ToolCalls) != 2 || resp.Message.ToolCalls[1].ID != "toolu_oslo" {
		t.Fatalf("calls = %+v", resp.Message.ToolCalls)
	}
	jsonEqual(t, "args", resp.Message.ToolCalls[1].Args, `{"city":"Oslo","unit":"celsius"}`)
	if resp.Usage != (llm.Usage{InputTokens: 472, OutputTokens: 91}) {
		t.Errorf("usage = %+v (counted once per turn, not per block)", resp.Usage)
	}
	if r := p.requests()[0]; path(r.body, "tools", 0, "input_schema", "required", 0) != "city" || path(r.body, "max_tokens") != float64(100) {
		t.Errorf("request = %s", r.raw)
	}
	_, err = m.Generate(t.Context(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "again"}}})
	checkFailure(t, err, failure.Transient, true, "langchaingo-anthropic", testAnthropicKey)
}

func TestToLangChain(t *testing.T) {
	temp := 0.2
	req := &llm.Request{System: "sys", Temperature: &temp, Messages: []llm.Message{
		{Role: llm.RoleUser, Text: "q"},
		{Role: llm.RoleAssistant, Text: "thinking", ToolCalls: []llm.ToolCall{{ID: "1", Name: "a", Args: json.RawMessage(`{"x":1}`)}, {ID: "2", Name: "b"}}},
		{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "1", Name: "a", Content: "r1"}, {CallID: "2", Name: "b", Content: "r2", IsError: true}}},
		{Role: llm.RoleAssistant},
	}}
	msgs := toLangChain(req)
	roles := []llms.ChatMessageType{llms.ChatMessageTypeSystem, llms.ChatMessageTypeHuman, llms.ChatMessageTypeAI,
		llms.ChatMessageTypeTool, llms.ChatMessageTypeTool, llms.ChatMessageTypeAI}
	if len(msgs) != len(roles) {
		t.Fatalf("%d messages: %+v", len(msgs), msgs)
	}
	for i, r := range roles {
		if msgs[i].Role != r {
			t.Errorf("message %d role %s, want %s", i, msgs[i].Role, r)
		}
	}
	ai := msgs[2].Parts
	if len(ai) != 3 {
		t.Fatalf("assistant parts = %+v", ai)
	}
	if tc, ok := ai[2].(llms.ToolCall); !ok || tc.ID != "2" || tc.Type != "function" || tc.FunctionCall.Arguments != "{}" {
		t.Errorf("second call = %+v", ai[2])
	}
	if tr, ok := msgs[4].Parts[0].(llms.ToolCallResponse); !ok || tr.ToolCallID != "2" || tr.Content != "r2" {
		t.Errorf("second result = %+v", msgs[4].Parts[0])
	}
	if tools := toolsToLangChain([]llm.ToolDef{{Name: "n"}}); string(tools[0].Function.Parameters.(json.RawMessage)) != `{"type":"object","properties":{}}` {
		t.Errorf("schema of a tool without one = %v", tools[0].Function.Parameters)
	}
}

// TestLangChainAnthropicDropsParts pins the langchaingo v0.1.14 defect that
// Anthropic works around: sent back through langchaingo's anthropic
// provider, an assistant turn with text and two tool calls keeps only its
// first block, and the tool results are split into separate user messages.
// If an upgrade fixes this, this test fails and the workaround can go.
func TestLangChainAnthropicDropsParts(t *testing.T) {
	p := newProvider(t, reply{200, "application/json", []byte(anthropicFinal)})
	lc, err := anthropic.New(anthropic.WithToken(testAnthropicKey), anthropic.WithBaseURL(p.URL+"/v1"),
		anthropic.WithModel("claude-sonnet-4-5"), anthropic.WithHTTPClient(p.Client()))
	if err != nil {
		t.Fatal(err)
	}
	m, err := newLangChain(langChainConfig{Model: lc})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Generate(t.Context(), &llm.Request{Messages: []llm.Message{
		{Role: llm.RoleUser, Text: "weather?"},
		{Role: llm.RoleAssistant, Text: "Checking both.", ToolCalls: []llm.ToolCall{
			{ID: "toolu_paris", Name: "get_weather", Args: json.RawMessage(`{"city":"Paris"}`)},
			{ID: "toolu_oslo", Name: "get_weather", Args: json.RawMessage(`{"city":"Oslo"}`)}}},
		{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "toolu_paris", Content: "18°C"}, {CallID: "toolu_oslo", Content: "9°C"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	body := p.requests()[0].body
	asst := path(body, "messages", 1)
	if path(asst, "content", 0, "type") != "text" || path(asst, "content", 1) != nil {
		t.Errorf("langchaingo now keeps the assistant's blocks: %v", asst)
	}
	if path(body, "messages", 2, "content", 1) != nil || path(body, "messages", 3, "content", 0, "type") != "tool_result" {
		t.Errorf("langchaingo now sends the tool results differently: %v", path(body, "messages"))
	}
}
