package openai

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/providertest"
)

func newTestModel(t *testing.T, p *providertest.Server, model string) *openAIModel {
	t.Helper()
	m, err := newOpenAI(provider.Config{APIKey: providertest.OpenAIKey, BaseURL: p.URL + "/v1", Model: model, HTTPClient: p.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// weatherSchema is in strict mode's subset; looseSchema is not (an
// optional property, extra properties allowed).
const (
	weatherSchema = `{"type":"object","properties":{"city":{"type":"string"},"temperature_c":{"type":"integer"}},"required":["city","temperature_c"],"additionalProperties":false}`
	looseSchema   = `{"type":"object","properties":{"city":{"type":"string"},"temperature_c":{"type":"integer"}},"required":["city"]}`
)

// TestOpenAIStructuredOutput: the answer schema goes as a json_schema
// response format (strict only when the schema qualifies), the JSON answer
// comes back as the message's text, JSON or streamed; and a repair round
// trip (an answer the caller found wanting, told back to the model) sends
// the schema again and returns the second answer. Usage carries the cached
// and reasoning tokens.
func TestOpenAIStructuredOutput(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		strict bool
		stream bool
	}{
		{"strict", weatherSchema, true, false},
		{"not strict", looseSchema, false, false},
		{"strict streamed", weatherSchema, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := providertest.Reply{Status: 200, ContentType: "application/json", Body: providertest.Fixture(t, "openai_chat_structured_invalid.json")}
			good := providertest.Reply{Status: 200, ContentType: "application/json", Body: providertest.Fixture(t, "openai_chat_structured.json")}
			if tt.stream {
				good = providertest.Reply{Status: 200, ContentType: "text/event-stream", Body: providertest.Fixture(t, "openai_stream_structured.sse")}
			}
			p := providertest.NewServer(t, bad, good)
			m := newTestModel(t, p, "o4-mini")
			out := &llm.Output{Name: "weather report", Description: "The weather of one city.", Schema: json.RawMessage(tt.schema)}
			req := &llm.Request{Output: out, Messages: []llm.Message{{Role: llm.RoleUser, Text: "Weather in Paris as JSON."}}}
			first, err := m.Generate(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if first.Message.Text != `{"city":"Paris"}` {
				t.Fatalf("first answer = %q", first.Message.Text)
			}
			// The caller's validation found temperature_c missing: it says
			// so and asks again.
			req.Messages = append(req.Messages, first.Message,
				llm.Message{Role: llm.RoleUser, Text: "Your answer is not valid against the schema: missing property temperature_c. Answer again."})
			var deltas []string
			if tt.stream {
				req.OnText = func(d string) { deltas = append(deltas, d) }
			}
			second, err := m.Generate(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			providertest.JSONEqual(t, "repaired answer", json.RawMessage(second.Message.Text), `{"city":"Paris","temperature_c":18}`)
			if tt.stream && strings.Join(deltas, "") != second.Message.Text {
				t.Errorf("streamed %q, kept %q", deltas, second.Message.Text)
			}
			want := llm.Usage{InputTokens: 2150, OutputTokens: 312, CacheReadTokens: 1920, ReasoningTokens: 256}
			if second.Usage != want {
				t.Errorf("usage = %+v, want %+v", second.Usage, want)
			}
			reqs := p.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			for i, r := range reqs {
				rf := providertest.Path(r.Body, "response_format")
				if providertest.Path(rf, "type") != "json_schema" || providertest.Path(rf, "json_schema", "name") != "weather_report" ||
					providertest.Path(rf, "json_schema", "strict") != tt.strict ||
					providertest.Path(rf, "json_schema", "description") != "The weather of one city." {
					t.Errorf("request %d: response_format = %v", i, rf)
				}
				schema, _ := json.Marshal(providertest.Path(rf, "json_schema", "schema"))
				providertest.JSONEqual(t, "schema sent", schema, tt.schema)
			}
			msgs, _ := providertest.Path(reqs[1].Body, "messages").([]any)
			if len(msgs) != 3 || providertest.Path(msgs[1], "content") != `{"city":"Paris"}` ||
				!strings.Contains(providertest.Path(msgs[2], "content").(string), "temperature_c") {
				t.Errorf("repair request messages = %v", msgs)
			}
		})
	}
}

// TestOpenAIBadOutputSchema: a schema that is not a JSON object is the
// caller's mistake, refused before any request.
func TestOpenAIBadOutputSchema(t *testing.T) {
	p := providertest.NewServer(t, providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte(providertest.OpenAIFinal)})
	m := newTestModel(t, p, "gpt-4o-mini")
	for _, s := range []string{`{"type":`, `["not","an","object"]`} {
		_, err := m.Generate(t.Context(), &llm.Request{Output: &llm.Output{Schema: json.RawMessage(s)}, Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}})
		providertest.CheckFailure(t, err, failure.Config, false, "openai/gpt-4o-mini", providertest.OpenAIKey)
	}
	if n := len(p.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

// TestStrictSchema: which schemas go with strict: true.
func TestStrictSchema(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		strict bool
	}{
		{"closed object", weatherSchema, true},
		{"optional property", looseSchema, false},
		{"additionalProperties missing", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, false},
		{"nested object open", `{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"string"}},"required":["b"]}},"required":["a"],"additionalProperties":false}`, false},
		{"array of closed objects", `{"type":"object","properties":{"xs":{"type":"array","items":{"type":"object","properties":{"b":{"type":"string"}},"required":["b"],"additionalProperties":false}}},"required":["xs"],"additionalProperties":false}`, true},
		{"array of open objects", `{"type":"object","properties":{"xs":{"type":"array","items":{"type":"object","properties":{"b":{"type":"string"}}}}},"required":["xs"],"additionalProperties":false}`, false},
		{"$defs and $ref", `{"type":"object","properties":{"p":{"$ref":"#/$defs/P"}},"required":["p"],"additionalProperties":false,"$defs":{"P":{"type":"object","properties":{"n":{"type":["string","null"]}},"required":["n"],"additionalProperties":false}}}`, true},
		{"open $def", `{"type":"object","properties":{"p":{"$ref":"#/$defs/P"}},"required":["p"],"additionalProperties":false,"$defs":{"P":{"type":"object","properties":{"n":{"type":"string"}}}}}`, false},
		{"anyOf of closed objects", `{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"object","properties":{},"additionalProperties":false}]}},"required":["v"],"additionalProperties":false}`, true},
		{"allOf refused", `{"type":"object","properties":{"v":{"allOf":[{"type":"string"}]}},"required":["v"],"additionalProperties":false}`, false},
		{"a property named like a keyword", `{"type":"object","properties":{"not":{"type":"string"},"allOf":{"type":"string"}},"required":["not","allOf"],"additionalProperties":false}`, true},
		{"root not an object", `{"type":"array","items":{"type":"string"}}`, false},
		{"root a union", `{"type":"object","anyOf":[{"type":"object","properties":{},"additionalProperties":false}],"properties":{},"additionalProperties":false}`, false},
		{"additionalProperties a schema", `{"type":"object","properties":{},"additionalProperties":{"type":"string"}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := schemaFormat(&llm.Output{Schema: json.RawMessage(tt.schema)})
			if err != nil {
				t.Fatal(err)
			}
			if f.Strict != tt.strict || f.Name != "answer" {
				t.Errorf("strict = %v, name %q; want %v", f.Strict, f.Name, tt.strict)
			}
		})
	}
}

// TestOpenAIParts: a user message's image (bytes and URL), audio, PDF and
// text document go as the API's content parts; a tool result's image goes
// in a user message after the turn's tool messages, since a tool message
// takes text only; parts the API cannot carry are described in text.
func TestOpenAIParts(t *testing.T) {
	p := providertest.NewServer(t, providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte(providertest.OpenAIFinal)})
	m := newTestModel(t, p, "gpt-4o")
	png := []byte("\x89PNG\r\n\x1a\nfake")
	pdf := []byte("%PDF-1.7 fake")
	wav := []byte("RIFF....WAVEfmt ")
	req := &llm.Request{Tools: providertest.WeatherTools(), Messages: []llm.Message{
		{Role: llm.RoleUser, Text: "What do these show?", Parts: []llm.Part{
			llm.ImagePart("image/png", png),
			{Kind: llm.PartImage, MediaType: "image/jpeg", URL: "https://example.com/cat.jpg"},
			{Kind: llm.PartAudio, MediaType: "audio/wav", Data: wav},
			llm.DocumentPart("report.pdf", "application/pdf", pdf),
			llm.DocumentPart("notes.md", "text/markdown", []byte("# Notes\nrain")),
			{Kind: llm.PartAudio, MediaType: "audio/ogg", Data: []byte("OggS")},
		}},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_map", Name: "get_weather", Args: json.RawMessage(`{"city":"Paris"}`)},
			{ID: "call_oslo", Name: "get_weather", Args: json.RawMessage(`{"city":"Oslo"}`)}}},
		{Role: llm.RoleTool, ToolResults: []llm.ToolResult{
			{CallID: "call_map", Name: "get_weather", Content: "18°C; radar attached", Parts: []llm.Part{llm.ImagePart("image/png", png)}},
			{CallID: "call_oslo", Name: "get_weather", Content: "9°C"}}},
	}}
	if _, err := m.Generate(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	msgs, _ := providertest.Path(p.Requests()[0].Body, "messages").([]any)
	if len(msgs) != 5 {
		t.Fatalf("%d messages: %v", len(msgs), msgs)
	}
	user := msgs[0]
	b64 := base64.StdEncoding.EncodeToString
	wantParts := []struct {
		path []any
		want any
	}{
		{[]any{"content", 0, "type"}, "text"},
		{[]any{"content", 0, "text"}, "What do these show?"},
		{[]any{"content", 1, "image_url", "url"}, "data:image/png;base64," + b64(png)},
		{[]any{"content", 2, "image_url", "url"}, "https://example.com/cat.jpg"},
		{[]any{"content", 3, "type"}, "input_audio"},
		{[]any{"content", 3, "input_audio", "format"}, "wav"},
		{[]any{"content", 3, "input_audio", "data"}, b64(wav)},
		{[]any{"content", 4, "type"}, "file"},
		{[]any{"content", 4, "file", "filename"}, "report.pdf"},
		{[]any{"content", 4, "file", "file_data"}, "data:application/pdf;base64," + b64(pdf)},
		{[]any{"content", 5, "type"}, "text"},
		{[]any{"content", 5, "text"}, "[document \"notes.md\" text/markdown]\n# Notes\nrain"},
		{[]any{"content", 6, "text"}, "[audio audio/ogg, 4 bytes]"},
	}
	for _, w := range wantParts {
		if got := providertest.Path(user, w.path...); got != w.want {
			t.Errorf("user %v = %v, want %v", w.path, got, w.want)
		}
	}
	if providertest.Path(msgs[2], "role") != "tool" || !strings.Contains(providertest.Path(msgs[2], "content").(string), "follow in the next user message") ||
		providertest.Path(msgs[3], "role") != "tool" || providertest.Path(msgs[3], "content") != "9°C" {
		t.Errorf("tool messages = %v, %v", msgs[2], msgs[3])
	}
	after := msgs[4]
	if providertest.Path(after, "role") != "user" || !strings.Contains(providertest.Path(after, "content", 0, "text").(string), "call_map") ||
		providertest.Path(after, "content", 1, "image_url", "url") != "data:image/png;base64,"+b64(png) {
		t.Errorf("tool-result media message = %v", after)
	}
}

// TestOpenAICacheAndReasoningFields: prompt_cache_key and reasoning_effort
// go to the models that take them, and to no other (an OpenAI-compatible
// server may refuse fields it does not know).
func TestOpenAICacheAndReasoningFields(t *testing.T) {
	tests := []struct {
		model     string
		reasoning *llm.Reasoning
		noCache   bool
		key       any
		effort    any
	}{
		{"gpt-4o-mini", &llm.Reasoning{Effort: llm.EffortHigh}, false, "session-42", nil},
		{"o4-mini", &llm.Reasoning{Effort: llm.EffortHigh}, false, "session-42", "high"},
		{"o3", &llm.Reasoning{Effort: llm.EffortMinimal}, false, "session-42", "low"},
		{"gpt-5-mini", &llm.Reasoning{Effort: llm.EffortMinimal}, true, nil, "minimal"},
		{"gpt-5", &llm.Reasoning{BudgetTokens: 10000}, false, "session-42", "medium"},
		{"gpt-5", nil, false, "session-42", nil},
		{"llama3.2", &llm.Reasoning{Effort: llm.EffortLow}, false, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			p := providertest.NewServer(t, providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte(providertest.OpenAIFinal)})
			m := newTestModel(t, p, tt.model)
			req := providertest.UserReq("hi")
			req.CacheKey, req.NoCache, req.Reasoning = "session-42", tt.noCache, tt.reasoning
			if _, err := m.Generate(t.Context(), req); err != nil {
				t.Fatal(err)
			}
			body := p.Requests()[0].Body
			if got := providertest.Path(body, "prompt_cache_key"); got != tt.key {
				t.Errorf("prompt_cache_key = %v, want %v", got, tt.key)
			}
			if got := providertest.Path(body, "reasoning_effort"); got != tt.effort {
				t.Errorf("reasoning_effort = %v, want %v", got, tt.effort)
			}
			if providertest.Path(body, "model") != tt.model || providertest.Path(body, "messages", 0, "content") != "hi" {
				t.Errorf("the rewritten body lost what langchaingo set: %s", p.Requests()[0].Raw)
			}
		})
	}
}

// TestOpenAIStreamReasoning: a compatible server's streamed reasoning
// (reasoning_content, DeepSeek and vLLM; reasoning, OpenRouter and
// Ollama's /v1) becomes Message.Reasoning and never reaches OnText.
func TestOpenAIStreamReasoning(t *testing.T) {
	for _, field := range []string{"reasoning_content", "reasoning"} {
		t.Run(field, func(t *testing.T) {
			stream := "data: {\"id\":\"c1\",\"model\":\"deepseek-reasoner\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"" + field + "\":\"Think \"}}]}\n\n" +
				"data: {\"id\":\"c1\",\"model\":\"deepseek-reasoner\",\"choices\":[{\"index\":0,\"delta\":{\"" + field + "\":\"hard.\"}}]}\n\n" +
				"data: {\"id\":\"c1\",\"model\":\"deepseek-reasoner\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"42\"},\"finish_reason\":\"stop\"}]}\n\n" +
				"data: {\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":30,\"completion_tokens_details\":{\"reasoning_tokens\":28}}}\n\ndata: [DONE]\n\n"
			p := providertest.NewServer(t, providertest.Reply{Status: 200, ContentType: "text/event-stream", Body: []byte(stream)})
			m := newTestModel(t, p, "deepseek-reasoner")
			var got strings.Builder
			req := providertest.UserReq("the answer?")
			req.OnText = func(d string) { got.WriteString(d) }
			resp, err := m.Generate(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Text != "42" || got.String() != "42" || resp.Message.Reasoning != "Think hard." {
				t.Errorf("text %q, streamed %q, reasoning %q", resp.Message.Text, got.String(), resp.Message.Reasoning)
			}
			if resp.Usage != (llm.Usage{InputTokens: 10, OutputTokens: 30, ReasoningTokens: 28}) {
				t.Errorf("usage = %+v", resp.Usage)
			}
		})
	}
}

// TestOpenAIContextLength: a prompt longer than the window is a Budget
// failure, not retried, JSON or streamed.
func TestOpenAIContextLength(t *testing.T) {
	for _, stream := range []bool{false, true} {
		p := providertest.NewServer(t, providertest.Reply{Status: 400, ContentType: "application/json", Body: providertest.Fixture(t, "openai_error_context_length.json")})
		m := newTestModel(t, p, "gpt-4o-mini")
		req := providertest.UserReq("a very long prompt")
		if stream {
			req.OnText = func(string) {}
		}
		_, err := m.Generate(t.Context(), req)
		providertest.CheckFailure(t, err, failure.Budget, false, "openai/gpt-4o-mini", providertest.OpenAIKey)
		if !strings.Contains(err.Error(), "context_length_exceeded") || !strings.Contains(err.Error(), "128000 tokens") {
			t.Errorf("err = %v", err)
		}
	}
}

// TestCapabilitiesByModel: what each model is said to take.
func TestCapabilitiesByModel(t *testing.T) {
	media := []llm.PartKind{llm.PartImage, llm.PartDocument}
	tests := []struct {
		model     string
		accepts   []llm.PartKind
		reasoning bool
		cache     bool
	}{
		{"gpt-4o-mini", media, false, true},
		{"gpt-4.1-nano", media, false, true},
		{"gpt-5", media, true, true},
		{"gpt-5-chat-latest", media, false, true},
		{"o4-mini", media, true, true},
		{"o3-mini", nil, true, true},
		{"o1-mini", nil, false, true},
		{"gpt-4o-audio-preview", []llm.PartKind{llm.PartAudio}, false, true},
		{"gpt-3.5-turbo", nil, false, true},
		{"openai/gpt-4o", media, false, true},
		{"llama3.2", nil, false, false},
	}
	for _, tt := range tests {
		c := capabilitiesOf(tt.model)
		if !slices.Equal(c.Accepts, tt.accepts) || c.Reasoning != tt.reasoning || c.PromptCache != tt.cache ||
			!c.StructuredOutput || !c.ToolSearch || c.ContextWindow != 0 {
			t.Errorf("%s: %+v", tt.model, c)
		}
		if (len(tt.accepts) > 0) != (c.MaxPartBytes == 20<<20) {
			t.Errorf("%s: MaxPartBytes %d", tt.model, c.MaxPartBytes)
		}
	}
	if llm.CapabilitiesOf(&openAIModel{model: "gpt-4o"}).Accept(llm.PartImage) != true {
		t.Error("the model is not a Describer")
	}
}

// BenchmarkBodyRewrite measures completing a 20-turn request's body in the
// tap (building and encoding the messages, schema and cache key, decoding
// langchaingo's body and writing it again with them) against only encoding
// the messages, which any way of sending them pays, and reports the ratio.
func BenchmarkBodyRewrite(b *testing.B) {
	req := &llm.Request{System: strings.Repeat("You are a careful agent. ", 40), Tools: providertest.WeatherTools(),
		CacheKey: "session-1", Output: &llm.Output{Schema: json.RawMessage(weatherSchema)}}
	for i := range 20 {
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Text: strings.Repeat("What is the weather like? ", 20)},
			llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_" + string(rune('a'+i)), Name: "get_weather", Args: json.RawMessage(`{"city":"Paris"}`)}}},
			llm.Message{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "call_" + string(rune('a'+i)), Name: "get_weather", Content: strings.Repeat("18°C and dry. ", 30)}}})
	}
	// What langchaingo builds: its placeholder message, the tools.
	lcBody, err := json.Marshal(map[string]any{"model": "gpt-4o-mini", "messages": []any{map[string]string{"role": "user", "content": ""}}, "temperature": 0,
		"tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": "get_weather", "parameters": json.RawMessage(`{"type":"object"}`)}}}})
	if err != nil {
		b.Fatal(err)
	}
	providertest.CompareBench(b, "encode", func() {
		if _, err := json.Marshal(chatMessages(req)); err != nil {
			b.Fatal(err)
		}
	}, "rewrite", func() {
		p, err := chatPatch("gpt-4o-mini", req)
		if err != nil {
			b.Fatal(err)
		}
		hreq, _ := http.NewRequest(http.MethodPost, "http://x/v1/chat/completions", bytes.NewReader(lcBody))
		if err := p.rewrite(hreq); err != nil {
			b.Fatal(err)
		}
	})
}

// TestOpenAIRefusal: a model that declines to give a structured answer
// says so in "refusal", which langchaingo does not read: the call fails
// with kind Model and the model's words, JSON or streamed.
func TestOpenAIRefusal(t *testing.T) {
	const words = "I'm sorry, I cannot assist with that request."
	answer := `{"id":"chatcmpl-R","object":"chat.completion","model":"gpt-4o-2024-08-06","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"` + words + `"},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":81,"completion_tokens":11,"total_tokens":92}}`
	stream := "data: {\"id\":\"chatcmpl-R\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"refusal\":\"\"},\"finish_reason\":null}]}\n\n" +
		"data: {\"id\":\"chatcmpl-R\",\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\"I'm sorry, \"},\"finish_reason\":null}]}\n\n" +
		"data: {\"id\":\"chatcmpl-R\",\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\"I cannot assist with that request.\"},\"finish_reason\":null}]}\n\n" +
		"data: {\"id\":\"chatcmpl-R\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	for _, rep := range []providertest.Reply{
		{Status: 200, ContentType: "application/json", Body: []byte(answer)},
		{Status: 200, ContentType: "text/event-stream", Body: []byte(stream)},
	} {
		p := providertest.NewServer(t, rep)
		m := newTestModel(t, p, "gpt-4o")
		req := &llm.Request{Output: &llm.Output{Schema: json.RawMessage(weatherSchema)}, Messages: []llm.Message{{Role: llm.RoleUser, Text: "x"}}}
		if rep.ContentType == "text/event-stream" {
			req.OnText = func(d string) { t.Errorf("OnText(%q) for a refusal", d) }
		}
		_, err := m.Generate(t.Context(), req)
		providertest.CheckFailure(t, err, failure.Model, false, "openai/gpt-4o", providertest.OpenAIKey)
		if err == nil || !strings.Contains(err.Error(), words) {
			t.Errorf("%s: err = %v", rep.ContentType, err)
		}
	}
}
