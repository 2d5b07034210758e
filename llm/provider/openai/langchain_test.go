package openai

import (
	"encoding/json"
	"testing"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/providertest"
)

// TestLangChainOverAnthropicProvider runs the generic adapter over
// langchaingo's own anthropic provider, which answers with one choice per
// content block: the adapter must join them into one turn, count usage
// once, and report the provider's failures with the taxonomy.

func TestLangChainOverAnthropicProvider(t *testing.T) {
	p := providertest.NewServer(t,
		providertest.Reply{Status: 200, ContentType: "application/json", Body: providertest.Fixture(t, "anthropic_messages_tools.json")},
		providertest.Reply{Status: 429, ContentType: "application/json", Body: []byte(`{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`)})
	lc, err := anthropic.New(anthropic.WithToken(providertest.AnthropicKey), anthropic.WithBaseURL(p.URL+"/v1"),
		anthropic.WithModel("claude-sonnet-4-5"), anthropic.WithHTTPClient(p.Client()))
	if err != nil {
		t.Fatal(err)
	}
	m, err := newLangChain(langChainConfig{Model: lc, Name: "langchaingo-anthropic", Secrets: []string{providertest.AnthropicKey}})
	if err != nil {
		t.Fatal(err)
	}
	req := &llm.Request{Tools: providertest.WeatherTools(), MaxTokens: 100, Messages: []llm.Message{{Role: llm.RoleUser, Text: "weather?"}}}
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
	providertest.JSONEqual(t, "args", resp.Message.ToolCalls[1].Args, `{"city":"Oslo","unit":"celsius"}`)
	if resp.Usage != (llm.Usage{InputTokens: 472, OutputTokens: 91}) {
		t.Errorf("usage = %+v (counted once per turn, not per block)", resp.Usage)
	}
	if r := p.Requests()[0]; providertest.Path(r.Body, "tools", 0, "input_schema", "required", 0) != "city" || providertest.Path(r.Body, "max_tokens") != float64(100) {
		t.Errorf("request = %s", r.Raw)
	}
	_, err = m.Generate(t.Context(), &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "again"}}})
	providertest.CheckFailure(t, err, failure.Transient, true, "langchaingo-anthropic", providertest.AnthropicKey)
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
	p := providertest.NewServer(t, providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte(providertest.AnthropicFinal)})
	lc, err := anthropic.New(anthropic.WithToken(providertest.AnthropicKey), anthropic.WithBaseURL(p.URL+"/v1"),
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
	body := p.Requests()[0].Body
	asst := providertest.Path(body, "messages", 1)
	if providertest.Path(asst, "content", 0, "type") != "text" || providertest.Path(asst, "content", 1) != nil {
		t.Errorf("langchaingo now keeps the assistant's blocks: %v", asst)
	}
	if providertest.Path(body, "messages", 2, "content", 1) != nil || providertest.Path(body, "messages", 3, "content", 0, "type") != "tool_result" {
		t.Errorf("langchaingo now sends the tool results differently: %v", providertest.Path(body, "messages"))
	}
}
