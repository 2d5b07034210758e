package anthropic

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/switchboard-dev/switchboard/failure"
	"github.com/switchboard-dev/switchboard/llm"
	"github.com/switchboard-dev/switchboard/llm/provider"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/providertest"
	"github.com/switchboard-dev/switchboard/llm/provider/internal/wire"
)

func newTestAnthropic(t *testing.T, p *providertest.Server) llm.Model {
	t.Helper()
	m, err := newAnthropic(provider.Config{APIKey: providertest.AnthropicKey, BaseURL: p.URL, Model: "claude-sonnet-4-5", HTTPClient: p.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestAnthropicToolCallsRoundTrip(t *testing.T) {
	tests := []struct {
		name      string
		stream    bool
		first     providertest.Reply
		wantText  string
		wantOslo  string
		wantUsage llm.Usage
	}{
		{"json", false, providertest.Reply{Status: 200, ContentType: "application/json", Body: providertest.Fixture(t, "anthropic_messages_tools.json")},
			"Let me check both cities.", `{"city":"Oslo","unit":"celsius"}`, llm.Usage{InputTokens: 492, OutputTokens: 91, CacheReadTokens: 20}},
		{"sse", true, providertest.Reply{Status: 200, ContentType: "text/event-stream", Body: providertest.Fixture(t, "anthropic_stream_tools.sse")},
			"Checking both.", `{"city":"Oslo"}`, llm.Usage{InputTokens: 472, OutputTokens: 89}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := providertest.NewServer(t, tt.first, providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte(providertest.AnthropicFinal)})
			m := newTestAnthropic(t, p)
			var deltas []string
			req := &llm.Request{System: "You are terse.", Tools: providertest.WeatherTools(),
				Messages: []llm.Message{{Role: llm.RoleUser, Text: "Weather in Paris and Oslo?"}}}
			if tt.stream {
				req.OnText = func(d string) { deltas = append(deltas, d) }
			}
			resp, err := m.Generate(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if tt.stream && (strings.Join(deltas, "") != tt.wantText || len(deltas) != 2) {
				t.Errorf("OnText got %q, want %q in 2 deltas", deltas, tt.wantText)
			}
			if resp.Message.Text != tt.wantText {
				t.Errorf("text = %q, want %q", resp.Message.Text, tt.wantText)
			}
			calls := resp.Message.ToolCalls
			if len(calls) != 2 || calls[0].ID != "toolu_paris" || calls[1].ID != "toolu_oslo" || calls[1].Name != "get_weather" {
				t.Fatalf("tool calls = %+v", calls)
			}
			providertest.JSONEqual(t, "args[0]", calls[0].Args, `{"city":"Paris"}`)
			providertest.JSONEqual(t, "args[1]", calls[1].Args, tt.wantOslo)
			if resp.Usage != tt.wantUsage {
				t.Errorf("usage = %+v, want %+v", resp.Usage, tt.wantUsage)
			}
			if resp.StopReason != "tool_use" {
				t.Errorf("stop reason = %q", resp.StopReason)
			}

			req2 := &llm.Request{System: req.System, Tools: req.Tools, Messages: []llm.Message{
				req.Messages[0], resp.Message,
				{Role: llm.RoleTool, ToolResults: []llm.ToolResult{
					{CallID: "toolu_paris", Name: "get_weather", Content: "18°C"},
					{CallID: "toolu_oslo", Name: "get_weather", Content: "Error: station offline", IsError: true}}},
			}}
			final, err := m.Generate(t.Context(), req2)
			if err != nil {
				t.Fatal(err)
			}
			if final.Message.Text != "Paris is 18°C; Oslo is unknown." || final.StopReason != "end_turn" {
				t.Errorf("final = %+v", final)
			}

			reqs := p.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			for _, r := range reqs {
				if r.Path != "/v1/messages" {
					t.Errorf("path = %q", r.Path)
				}
				if r.Header.Get("x-api-key") != providertest.AnthropicKey || r.Header.Get("anthropic-version") != anthropicVersion {
					t.Errorf("headers = %v", r.Header)
				}
				if r.Header.Get("Authorization") != "" {
					t.Errorf("Authorization sent to Anthropic")
				}
				if _, ok := r.Body["tool_choice"]; ok {
					t.Errorf("tool_choice sent: %s", r.Raw)
				}
				if providertest.Path(r.Body, "system", 0, "text") != "You are terse." || providertest.Path(r.Body, "model") != "claude-sonnet-4-5" ||
					providertest.Path(r.Body, "max_tokens") != float64(defaultMaxTokens) {
					t.Errorf("system/model/max_tokens: %s", r.Raw)
				}
				if providertest.Path(r.Body, "tools", 0, "name") != "get_weather" || providertest.Path(r.Body, "tools", 0, "input_schema", "required", 0) != "city" {
					t.Errorf("tools = %v", providertest.Path(r.Body, "tools"))
				}
			}
			if got := providertest.Path(reqs[0].Body, "stream"); (got == true) != tt.stream {
				t.Errorf("stream = %v", got)
			}
			msgs, _ := providertest.Path(reqs[1].Body, "messages").([]any)
			if len(msgs) != 3 {
				t.Fatalf("second request has %d messages, want 3 (user, assistant, user with results): %s", len(msgs), reqs[1].Raw)
			}
			asst := msgs[1]
			if providertest.Path(asst, "role") != "assistant" ||
				providertest.Path(asst, "content", 0, "type") != "text" || providertest.Path(asst, "content", 0, "text") != tt.wantText ||
				providertest.Path(asst, "content", 1, "type") != "tool_use" || providertest.Path(asst, "content", 1, "id") != "toolu_paris" ||
				providertest.Path(asst, "content", 1, "input", "city") != "Paris" ||
				providertest.Path(asst, "content", 2, "type") != "tool_use" || providertest.Path(asst, "content", 2, "id") != "toolu_oslo" ||
				providertest.Path(asst, "content", 2, "input", "city") != "Oslo" || providertest.Path(asst, "content", 3) != nil {
				t.Errorf("assistant message lost blocks: %v", asst)
			}
			res := msgs[2]
			if providertest.Path(res, "role") != "user" ||
				providertest.Path(res, "content", 0, "type") != "tool_result" || providertest.Path(res, "content", 0, "tool_use_id") != "toolu_paris" ||
				providertest.Path(res, "content", 0, "content") != "18°C" || providertest.Path(res, "content", 0, "is_error") != nil ||
				providertest.Path(res, "content", 1, "type") != "tool_result" || providertest.Path(res, "content", 1, "tool_use_id") != "toolu_oslo" ||
				providertest.Path(res, "content", 1, "is_error") != true || providertest.Path(res, "content", 2) != nil {
				t.Errorf("tool results are not one user message with two tool_result blocks: %v", res)
			}
		})
	}
}

func TestAnthropicMessages(t *testing.T) {
	tests := []struct {
		name string
		in   []llm.Message
		want string
	}{
		{"consecutive users merge", []llm.Message{{Role: llm.RoleUser, Text: "a"}, {Role: llm.RoleUser, Text: "b"}},
			`[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]`},
		{"results then a user note stay one message, results first",
			[]llm.Message{{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "t1", Name: "x", Args: []byte(`{}`)}}},
				{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "t1", Content: "ok"}}}, {Role: llm.RoleUser, Text: "go on"}},
			`[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"x","input":{}}]},
			  {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"},{"type":"text","text":"go on"}]}]`},
		{"malformed args go back as an empty object", []llm.Message{{Role: llm.RoleAssistant, Text: "t",
			ToolCalls: []llm.ToolCall{{ID: "t1", Name: "x", Args: []byte(`{"a":`)}, {ID: "t2", Name: "y", Args: []byte(`[1]`)}}}},
			`[{"role":"assistant","content":[{"type":"text","text":"t"},{"type":"tool_use","id":"t1","name":"x","input":{}},{"type":"tool_use","id":"t2","name":"y","input":{}}]}]`},
		{"empty messages are dropped", []llm.Message{{Role: llm.RoleUser, Text: ""}, {Role: llm.RoleAssistant}, {Role: llm.RoleUser, Text: "q"}},
			`[{"role":"user","content":[{"type":"text","text":"q"}]}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(anthropicMessages(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			providertest.JSONEqual(t, "messages", b, tt.want)
		})
	}
}

func TestAnthropicErrors(t *testing.T) {
	echoKey := `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key: ` + providertest.AnthropicKey + `"}}`
	tests := []struct {
		name      string
		stream    bool
		rep       providertest.Reply
		kind      failure.Kind
		retryable bool
		wantMsg   string // in the failure's message, if set
	}{
		{"429", false, providertest.Reply{Status: 429, ContentType: "application/json", Body: []byte(`{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`)}, failure.Transient, true, ""},
		{"529 overloaded", true, providertest.Reply{Status: 529, ContentType: "application/json", Body: []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)}, failure.Transient, true, ""},
		{"401 echoing the key", false, providertest.Reply{Status: 401, ContentType: "application/json", Body: []byte(echoKey)}, failure.PermissionDenied, false, ""},
		{"403", true, providertest.Reply{Status: 403, ContentType: "application/json", Body: []byte(`{"type":"error","error":{"type":"permission_error","message":"Your API key does not have permission to use the specified resource."}}`)}, failure.PermissionDenied, false, ""},
		{"400", false, providertest.Reply{Status: 400, ContentType: "application/json", Body: []byte(`{"type":"error","error":{"type":"invalid_request_error","message":"messages.1.content.1: unexpected tool_use_id found in tool_result blocks"}}`)}, failure.Model, false, ""},
		{"error event in the stream", true, providertest.Reply{Status: 200, ContentType: "text/event-stream", Body: []byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\nevent: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n")}, failure.Transient, true, ""},
		{"stream cut before message_stop", true, providertest.Reply{Status: 200, ContentType: "text/event-stream", Body: []byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\nevent: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")}, failure.Transient, true, ""},
		{"body not JSON", false, providertest.Reply{Status: 200, ContentType: "application/json", Body: []byte(`<html>gateway</html>`)}, failure.Protocol, false, ""},
		{"500", false, providertest.Reply{Status: 500, ContentType: "application/json", Body: []byte(`{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`)}, failure.Transient, true, "api_error"},
		{"prompt too long", false, providertest.Reply{Status: 400, ContentType: "application/json", Body: []byte(`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`)},
			failure.Budget, false, "the prompt does not fit the model's context window (the provider said: prompt is too long: 208310 tokens > 200000 maximum)"},
		{"input and max_tokens past the window", true, providertest.Reply{Status: 400, ContentType: "application/json", Body: []byte(`{"type":"error","error":{"type":"invalid_request_error","message":"input length and ` + "`max_tokens`" + ` exceed context limit: 197202 + 21333 > 200000, decrease input length or ` + "`max_tokens`" + ` and try again"}}`)},
			failure.Budget, false, "does not fit the model's context window"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := providertest.NewServer(t, tt.rep)
			m := newTestAnthropic(t, p)
			req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Text: "hi"}}}
			if tt.stream {
				req.OnText = func(string) {}
			}
			_, err := m.Generate(t.Context(), req)
			providertest.CheckFailure(t, err, tt.kind, tt.retryable, "anthropic/claude-sonnet-4-5", providertest.AnthropicKey)
			var fe *failure.Error
			if errors.As(err, &fe) && !strings.Contains(fe.Message, tt.wantMsg) {
				t.Errorf("message %q, want it to say %q", fe.Message, tt.wantMsg)
			}
			if tt.wantMsg == "" && strings.Contains(fe.Message, "context window") {
				t.Errorf("message %q blames the context window", fe.Message)
			}
		})
	}
}

// TestStreamCacheUsage: a streamed answer's cache reads and writes
// (message_start, repeated by message_delta) are reported apart and
// counted in InputTokens.
func TestStreamCacheUsage(t *testing.T) {
	p := providertest.NewServer(t, sseReply(t, "anthropic_stream_cache.sse"))
	m := newTestAnthropic(t, p)
	var streamed strings.Builder
	req := providertest.UserReq("What are the key themes?")
	req.System = "You are a literature tutor. <the full text of Pride and Prejudice>"
	req.OnText = func(d string) { streamed.WriteString(d) }
	resp, err := m.Generate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := llm.Usage{InputTokens: 21 + 188 + 1876, OutputTokens: 12, CacheReadTokens: 1876, CacheWriteTokens: 188}
	if resp.Usage != want || streamed.String() != "The key themes are pride and prejudice." || resp.Message.Text != streamed.String() {
		t.Errorf("usage %+v (want %+v), text %q", resp.Usage, want, resp.Message.Text)
	}
	if c := llm.CapabilitiesOf(m); !c.PromptCache || !c.StructuredOutput || !c.Reasoning || !c.ToolSearch || c.MaxPartBytes != 3932160 {
		t.Errorf("capabilities %+v", c)
	}
}

// FuzzObjectOrEmpty checks that whatever arguments a model produced, the
// tool_use input sent back is a JSON object, and a valid object is kept.
func FuzzObjectOrEmpty(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":`, `[1]`, `null`, ``, ` { "b" : [ 1 , 2 ] } `, `{"a":1}{"b":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out := wire.ObjectOrEmpty(in)
		var obj map[string]any
		if err := json.Unmarshal(out, &obj); err != nil || obj == nil {
			t.Fatalf("wire.ObjectOrEmpty(%q) = %q, not an object", in, out)
		}
		var orig map[string]any
		if json.Unmarshal(in, &orig) == nil && orig != nil && !reflect.DeepEqual(orig, obj) {
			t.Fatalf("wire.ObjectOrEmpty(%q) = %q changed a valid object", in, out)
		}
	})
}
