package openai

import (
	"encoding/json"
	"strings"
	"testing"

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
	b, err := json.Marshal(r.responsesBody(req))
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
		out, err := fromResponses("openai/fuzz", res)
		if err != nil {
			return
		}
		if p := out.Message.Provider; p != nil && !json.Valid(p) {
			t.Fatalf("provider items are not JSON: %q", p)
		}
		if _, err := json.Marshal(r.responsesBody(&llm.Request{Messages: []llm.Message{out.Message}})); err != nil {
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
