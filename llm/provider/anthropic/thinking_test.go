package anthropic

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/providertest"
)

// TestThinkingRequest: how Request.Reasoning becomes thinking, and what
// it does to max_tokens, temperature and tool_choice.
func TestThinkingRequest(t *testing.T) {
	temp := 0.2
	tests := []struct {
		name, model  string
		reasoning    *llm.Reasoning
		maxTokens    int
		output       bool
		wantThinking string // JSON of thinking, "" for none
		wantEffort   string
		wantMax      int
	}{
		{"no reasoning", "claude-sonnet-4-5", nil, 0, false, "", "", 4096},
		{"effort to budget", "claude-sonnet-4-5", &llm.Reasoning{Effort: llm.EffortLow}, 0, false, `{"type":"enabled","budget_tokens":2048}`, "", 4096},
		{"default effort is medium", "claude-sonnet-4-5", &llm.Reasoning{}, 0, false, `{"type":"enabled","budget_tokens":8192}`, "", 8192 + 4096},
		{"budget over max_tokens raises it", "claude-opus-4-1", &llm.Reasoning{Effort: llm.EffortHigh}, 1000, false, `{"type":"enabled","budget_tokens":24576}`, "", 25576},
		{"a budget below the API's least is raised", "claude-3-7-sonnet-latest", &llm.Reasoning{BudgetTokens: 100}, 0, false, `{"type":"enabled","budget_tokens":1024}`, "", 4096},
		{"budget wins over effort", "claude-haiku-4-5", &llm.Reasoning{Effort: llm.EffortHigh, BudgetTokens: 3000}, 0, false, `{"type":"enabled","budget_tokens":3000}`, "", 4096},
		{"adaptive by effort", "claude-opus-4-7", &llm.Reasoning{Effort: llm.EffortMinimal}, 0, false, `{"type":"adaptive","display":"summarized"}`, "low", 4096},
		{"adaptive from a budget", "claude-sonnet-4-6", &llm.Reasoning{BudgetTokens: 6000}, 20000, false, `{"type":"adaptive","display":"summarized"}`, "medium", 20000},
		{"adaptive keeps structured output", "claude-opus-4-6", &llm.Reasoning{Effort: llm.EffortHigh}, 0, true, `{"type":"adaptive","display":"summarized"}`, "high", 24576 + 4096},
		{"a model that does not think ignores it", "claude-3-5-haiku-latest", &llm.Reasoning{Effort: llm.EffortHigh}, 0, false, "", "", 4096},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &anthropicModel{model: tt.model, family: generationOf(tt.model), maxTokens: defaultMaxTokens}
			req := &llm.Request{MaxTokens: tt.maxTokens, Temperature: &temp, Reasoning: tt.reasoning, Tools: providertest.WeatherTools(),
				Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}}
			if tt.output {
				req.Output = &llm.Output{Schema: contactSchema}
			}
			out := a.toAnthropic(req)
			got, _ := json.Marshal(out.Thinking)
			if tt.wantThinking == "" {
				if out.Thinking != nil || out.Temperature == nil {
					t.Errorf("thinking %s, temperature %v", got, out.Temperature)
				}
			} else {
				providertest.JSONEqual(t, "thinking", got, tt.wantThinking)
				if out.Temperature != nil || out.ToolChoice != nil {
					t.Errorf("with thinking: temperature %v, tool_choice %+v", out.Temperature, out.ToolChoice)
				}
			}
			var effort string
			if out.OutputConfig != nil {
				effort = out.OutputConfig.Effort
				if tt.output != (out.OutputConfig.Format != nil) {
					t.Errorf("format %+v", out.OutputConfig.Format)
				}
			}
			if effort != tt.wantEffort || out.MaxTokens != tt.wantMax {
				t.Errorf("effort %q max_tokens %d, want %q %d", effort, out.MaxTokens, tt.wantEffort, tt.wantMax)
			}
		})
	}
}

// TestThinkingRoundTrip: streamed and JSON answers with thinking and
// redacted thinking: the thinking text is the Reasoning (never the text
// nor OnText), the blocks with their signatures are kept in Provider and
// sent back unchanged, first in the assistant turn.
func TestThinkingRoundTrip(t *testing.T) {
	tests := []struct {
		name      string
		reply     providertest.Reply
		stream    bool
		wantText  string
		reasoning string
		signature string
		usage     llm.Usage
	}{
		{"sse", sseReply(t, "anthropic_stream_thinking.sse"), true, "The greatest common divisor of 1071 and 462 is **21**.",
			"I need to find the GCD of 1071 and 462 using the Euclidean algorithm.\n\n1071 = 2 × 462 + 147\n462 = 3 × 147 + 21\n147 = 7 × 21 + 0\n\nSo GCD(1071, 462) = 21",
			"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds",
			llm.Usage{InputTokens: 12 + 2048, OutputTokens: 98, CacheReadTokens: 2048, ReasoningTokens: 71}},
		{"json", jsonReply(t, "anthropic_messages_thinking.json"), false, "I'll check the weather.",
			"The user wants the weather in Paris. I should call get_weather with city Paris.",
			"WaUjzkypQ2mUEVM36O2TxuC06KN8xyfbJwyem2dw3URve/op91XWHOEBLLqIOMfFG/UvLEczmEsUjavL....",
			llm.Usage{InputTokens: 30 + 1800, OutputTokens: 150, CacheWriteTokens: 1800, ReasoningTokens: 120}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := providertest.NewServer(t, tt.reply, providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte(providertest.AnthropicFinal)})
			m, err := newAnthropic(provider.Config{APIKey: providertest.AnthropicKey, BaseURL: p.URL, Model: "claude-sonnet-4-5", HTTPClient: p.Client()})
			if err != nil {
				t.Fatal(err)
			}
			var streamed strings.Builder
			req := &llm.Request{Tools: providertest.WeatherTools(), Reasoning: &llm.Reasoning{Effort: llm.EffortLow},
				Messages: []llm.Message{{Role: llm.RoleUser, Text: "GCD of 1071 and 462? Then the weather in Paris."}}}
			if tt.stream {
				req.OnText = func(d string) { streamed.WriteString(d) }
			}
			resp, err := m.Generate(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			msg := resp.Message
			if msg.Text != tt.wantText || msg.Reasoning != tt.reasoning || resp.Usage != tt.usage {
				t.Fatalf("text %q reasoning %q usage %+v", msg.Text, msg.Reasoning, resp.Usage)
			}
			if tt.stream && streamed.String() != tt.wantText {
				t.Errorf("OnText got %q", streamed.String())
			}
			var kept []map[string]any
			if err := json.Unmarshal(msg.Provider, &kept); err != nil || len(kept) != 2 {
				t.Fatalf("provider blocks %s (%v)", msg.Provider, err)
			}
			if kept[0]["type"] != "thinking" || kept[0]["signature"] != tt.signature || kept[0]["thinking"] != tt.reasoning ||
				kept[1]["type"] != "redacted_thinking" || !strings.HasPrefix(kept[1]["data"].(string), "EmwKAhgBEgy3va3pzix") {
				t.Errorf("kept %v", kept)
			}

			req.OnText = nil
			req.Messages = append(req.Messages, msg)
			if len(msg.ToolCalls) > 0 {
				req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: msg.ToolCalls[0].ID, Content: "18°C"}}})
			} else {
				req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Text: "And Oslo?"})
			}
			if _, err := m.Generate(t.Context(), req); err != nil {
				t.Fatal(err)
			}
			sent := rawAt(t, p.Requests()[1].Raw, "messages", 1)
			var asst struct {
				Content []json.RawMessage `json:"content"`
			}
			if err := json.Unmarshal(sent, &asst); err != nil || len(asst.Content) < 3 {
				t.Fatalf("assistant turn sent back: %s", sent)
			}
			var raws []json.RawMessage
			_ = json.Unmarshal(msg.Provider, &raws)
			if string(asst.Content[0]) != compact(t, raws[0]) || string(asst.Content[1]) != compact(t, raws[1]) {
				t.Errorf("thinking blocks not sent back first and unchanged:\n%s\n%s", sent, msg.Provider)
			}
			if !strings.Contains(string(asst.Content[2]), `"type":"text"`) {
				t.Errorf("text not after the thinking: %s", sent)
			}
		})
	}
}

// rawAt is the raw JSON of body[key][i].
func rawAt(t *testing.T, body []byte, key string, i int) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	var a []json.RawMessage
	if json.Unmarshal(body, &m) != nil || json.Unmarshal(m[key], &a) != nil || i >= len(a) {
		t.Fatalf("no %s[%d] in %s", key, i, body)
	}
	return a[i]
}

// compact is raw without insignificant space, as encoding/json sends it.
func compact(t *testing.T, raw []byte) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
