package openai

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/providertest"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/wire"
)

// TestResponsesBody: a turn that defers tools is stateless, sends every
// tool (deferred ones marked, none strict) and the tool_search tool, and
// sends the tool search's items back before the calls they loaded; an
// Anthropic message's blocks are not sent to OpenAI.
func TestResponsesBody(t *testing.T) {
	r := &responsesAPI{model: "gpt-5.4"}
	items := json.RawMessage(`[{"type":"tool_search_call","id":"ts_1","execution":"server","arguments":{"query":"w"}},` +
		`{"type":"tool_search_output","id":"tso_1","execution":"server","tools":[{"type":"function","name":"get_weather"}]},` +
		`{"type":"server_tool_use","id":"srvtoolu_1"}]`)
	req := &llm.Request{System: "be brief", Tools: []llm.ToolDef{{Name: "pinned"}, {Name: "get_weather", Deferred: true}},
		Messages: []llm.Message{{Role: llm.RoleUser, Text: "weather?"},
			{Role: llm.RoleAssistant, Provider: items, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "get_weather", Args: json.RawMessage(`{"city":"Oslo"}`)}}},
			{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "call_1", Name: "get_weather", Content: "3C"}}}}}
	rb, err := r.responsesBody(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(rb)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, want := range []string{`"store":false`, `"instructions":"be brief"`, `{"type":"tool_search"}`,
		`{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{}},"strict":false,"defer_loading":true}`,
		`{"type":"function","name":"pinned","parameters":{"type":"object","properties":{}},"strict":false}`,
		`{"type":"tool_search_output","id":"tso_1"`,
		`{"arguments":"{\"city\":\"Oslo\"}","call_id":"call_1","name":"get_weather","type":"function_call"}`,
		`{"call_id":"call_1","output":"3C","type":"function_call_output"}`} {
		if !strings.Contains(got, want) {
			t.Errorf("request lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, "srvtoolu") {
		t.Errorf("an Anthropic block went to OpenAI: %s", got)
	}
	if strings.Index(got, "tool_search_output") > strings.Index(got, `"type":"function_call"`) {
		t.Errorf("the search's items come after the call they loaded: %s", got)
	}
}

// FuzzResponsesAnswer: any Responses API answer, JSON or streamed, decodes
// to a Response or an error, never a panic, and what it keeps can be sent
// back.
func FuzzResponsesAnswer(f *testing.F) {
	f.Add([]byte(`{"status":"completed","output":[{"type":"tool_search_call","arguments":{"q":1}},{"type":"tool_search_output","tools":[]},`+
		`{"type":"function_call","call_id":"c","name":"n","arguments":"{\"a\":1}"},{"type":"message","content":[{"type":"output_text","text":"hi"}]}],"usage":{"input_tokens":3}}`), false)
	f.Add([]byte("event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"hi\"}\n\n"+
		"data: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\",\"output\":[{\"type\":\"message\",\"content\":[{\"type\":\"output_text\",\"text\":\"hi\"}]}]}}\n\n"), true)
	f.Add([]byte(`{"status":"failed","error":{"message":"x"}}`), false)
	f.Add([]byte("data: {\"type\":\"error\",\"message\":\"boom\"}\n\n"), true)
	f.Fuzz(func(t *testing.T, in []byte, stream bool) {
		r := &responsesAPI{}
		var res *responsesResponse
		if stream {
			var err error
			if res, err = r.readStream(t.Context(), "openai/fuzz", strings.NewReader(string(in)), func(string) {}); err != nil {
				return
			}
		} else {
			res = &responsesResponse{}
			if json.Unmarshal(in, res) != nil {
				return
			}
		}
		out, err := fromResponses(wire.Classifier{Name: "openai/fuzz"}, res)
		if err != nil {
			return
		}
		if p := out.Message.Provider; p != nil && !json.Valid(p) {
			t.Fatalf("provider items are not JSON: %q", p)
		}
		rb, err := r.responsesBody(&llm.Request{Messages: []llm.Message{out.Message}})
		if err != nil {
			t.Fatalf("the answer cannot be sent back: %v", err)
		}
		if _, err := json.Marshal(rb); err != nil {
			t.Fatalf("the answer cannot be sent back: %v", err)
		}
	})
}

// TestAnswerBounded: a JSON answer longer than wire.MaxResponseBody is refused
// on the Anthropic and the Responses paths, rather than read whole (a
// stream's lines are bounded by the SSE parser).
func TestAnswerBounded(t *testing.T) {
	huge := `{"type":"message","content":[{"type":"text","text":"` + strings.Repeat("x", wire.MaxResponseBody) + `"}]}`
	deferred := []llm.ToolDef{{Name: "t", Deferred: true}}
	for _, tc := range []struct {
		name, provider string
	}{
		{"anthropic", "anthropic"},
		{"responses", "openai"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := providertest.NewServer(t, providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte(huge)})
			m, err := New(provider.Config{Provider: tc.provider, APIKey: "k", BaseURL: p.URL + map[string]string{"openai": "/v1"}[tc.provider], HTTPClient: p.Client()})
			if err != nil {
				t.Fatal(err)
			}
			req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}, Tools: deferred}
			if resp, err := m.Generate(t.Context(), req); err == nil {
				t.Fatalf("an answer over the bound was accepted (%d bytes of text)", len(resp.Message.Text))
			}
		})
	}
}

// TestResponsesModelLayer: a turn on the Responses API (one that defers
// tools) carries the answer schema as text.format, the cache key, the
// reasoning effort and a user's image and PDF as input parts, a tool
// result's image in a user message after it; its usage counts cached and
// reasoning tokens, and a context-length refusal is a Budget failure.
func TestResponsesModelLayer(t *testing.T) {
	answer := `{"id":"resp_1","object":"response","status":"completed","model":"gpt-5.4","output":[{"type":"message","role":"assistant",` +
		`"content":[{"type":"output_text","text":"{\"city\":\"Paris\",\"temperature_c\":18}"}]}],` +
		`"usage":{"input_tokens":5000,"input_tokens_details":{"cached_tokens":4096},"output_tokens":300,"output_tokens_details":{"reasoning_tokens":200},"total_tokens":5300}}`
	tooLong := `{"error":{"message":"Your input exceeds the context window of this model.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}`
	p := providertest.NewServer(t, providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte(answer)},
		providertest.Reply{Status: 400, ContentType: "application/json", Body: []byte(tooLong)})
	m, err := newOpenAI(provider.Config{APIKey: providertest.OpenAIKey, BaseURL: p.URL + "/v1", Model: "gpt-5.4", HTTPClient: p.Client()})
	if err != nil {
		t.Fatal(err)
	}
	png, pdf := []byte("\x89PNGfake"), []byte("%PDF-1.7")
	req := &llm.Request{Tools: []llm.ToolDef{{Name: "get_weather", Deferred: true}}, CacheKey: "session-7",
		Reasoning: &llm.Reasoning{Effort: llm.EffortLow},
		Output:    &llm.Output{Name: "weather", Schema: json.RawMessage(weatherSchema)},
		Messages: []llm.Message{
			{Role: llm.RoleUser, Text: "Weather here?", Parts: []llm.Part{llm.ImagePart("image/png", png), llm.DocumentPart("r.pdf", "application/pdf", pdf)}},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "get_weather", Args: json.RawMessage(`{"city":"Paris"}`)}}},
			{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "call_1", Name: "get_weather", Content: "18C", Parts: []llm.Part{llm.ImagePart("image/png", png)}}}},
		}}
	resp, err := m.Generate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage != (llm.Usage{InputTokens: 5000, OutputTokens: 300, CacheReadTokens: 4096, ReasoningTokens: 200}) {
		t.Errorf("usage = %+v", resp.Usage)
	}
	providertest.JSONEqual(t, "answer", json.RawMessage(resp.Message.Text), `{"city":"Paris","temperature_c":18}`)
	b := p.Requests()[0].Body
	img := "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)
	for _, c := range []struct {
		path []any
		want any
	}{
		{[]any{"text", "format", "type"}, "json_schema"},
		{[]any{"text", "format", "name"}, "weather"},
		{[]any{"text", "format", "strict"}, true},
		{[]any{"prompt_cache_key"}, "session-7"},
		{[]any{"reasoning", "effort"}, "low"},
		{[]any{"input", 0, "content", 0, "type"}, "input_text"},
		{[]any{"input", 0, "content", 1, "image_url"}, img},
		{[]any{"input", 0, "content", 2, "type"}, "input_file"},
		{[]any{"input", 0, "content", 2, "file_data"}, "data:application/pdf;base64," + base64.StdEncoding.EncodeToString(pdf)},
		{[]any{"input", 2, "type"}, "function_call_output"},
		{[]any{"input", 3, "role"}, "user"},
		{[]any{"input", 3, "content", 1, "image_url"}, img},
	} {
		if got := providertest.Path(b, c.path...); got != c.want {
			t.Errorf("%v = %v, want %v", c.path, got, c.want)
		}
	}
	_, err = m.Generate(t.Context(), req)
	providertest.CheckFailure(t, err, failure.Budget, false, "openai/gpt-5.4", providertest.OpenAIKey)
}
